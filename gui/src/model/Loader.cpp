// Reads every table the timeline shows through store::Reader, then arranges it into tracks.
#include "torchscope/gui/Timeline.h"
#include "torchscope/store/Reader.h"

namespace torchscope::gui {

namespace {

Error cancelledError() { return makeError(ErrorCode::kInvalidArgument, "loading was cancelled"); }

// Loads one table into `out`; false with `error` set when it failed or loading was cancelled.
template <class T>
bool loadInto(const store::Reader& reader, std::vector<T>& out, const std::function<bool()>& cancelled,
              std::optional<Error>& error) {
  if (error) return false;
  if (cancelled && cancelled()) {
    error = cancelledError();
    return false;
  }
  auto rows = reader.load<T>();
  if (!rows) {
    error = rows.error();
    return false;
  }
  out = std::move(rows).value();
  return true;
}

}  // namespace

Result<std::shared_ptr<const Timeline>> loadTimeline(const std::string& path, const std::function<bool()>& cancelled) {
  auto reader = store::Reader::open(path);
  if (!reader) return reader.error();
  const store::Reader& store = **reader;
  Records records;
  auto run = store.run();
  if (run) records.run = std::move(run).value();

  std::optional<Error> error;
  loadInto(store, records.processes, cancelled, error);
  loadInto(store, records.threads, cancelled, error);
  loadInto(store, records.devices, cancelled, error);
  loadInto(store, records.steps, cancelled, error);
  loadInto(store, records.nvtx, cancelled, error);
  loadInto(store, records.cpu_ops, cancelled, error);
  loadInto(store, records.api_calls, cancelled, error);
  loadInto(store, records.syncs, cancelled, error);
  loadInto(store, records.kernels, cancelled, error);
  loadInto(store, records.memcpys, cancelled, error);
  loadInto(store, records.memsets, cancelled, error);
  loadInto(store, records.compiles, cancelled, error);
  loadInto(store, records.graph_breaks, cancelled, error);
  loadInto(store, records.recompiles, cancelled, error);
  loadInto(store, records.findings, cancelled, error);
  if (error) return *error;
  if (cancelled && cancelled()) return cancelledError();
  return buildTimeline(std::move(records));
}

}  // namespace torchscope::gui
