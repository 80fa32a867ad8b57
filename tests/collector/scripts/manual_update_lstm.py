# An eager LSTM language model trained with a manual SGD update and no optimizer object (as pytorch/examples'
# word_language_model does): its steps are found from backward().
import torch

torch.manual_seed(0)
vocabulary, hidden, steps, lr = 50, 16, 12, 0.5
embedding = torch.nn.Embedding(vocabulary, hidden)
lstm = torch.nn.LSTM(hidden, hidden, batch_first=True)
decoder = torch.nn.Linear(hidden, vocabulary)
parameters = [*embedding.parameters(), *lstm.parameters(), *decoder.parameters()]
data = torch.randint(0, vocabulary, (4, 9))
for _ in range(steps):
    for p in parameters:
        p.grad = None
    output, _ = lstm(embedding(data[:, :-1]))
    loss = torch.nn.functional.cross_entropy(decoder(output).reshape(-1, vocabulary), data[:, 1:].reshape(-1))
    loss.backward()
    torch.nn.utils.clip_grad_norm_(parameters, 0.25)
    for p in parameters:
        p.data.add_(p.grad, alpha=-lr)
print("done", flush=True)
