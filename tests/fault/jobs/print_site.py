import os

print("own sitecustomize:", os.environ.get("FAULT_OWN_SITECUSTOMIZE", "missing"), flush=True)
