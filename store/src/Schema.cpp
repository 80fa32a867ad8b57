#include "torchscope/store/Schema.h"

namespace torchscope::store {

namespace {

// Keep in step with docs/FORMAT.md (tests/store/FormatDocTest.cpp checks it) and with Tables.h.
constexpr std::string_view kSchema = R"sql(
CREATE TABLE strings (
  id    INTEGER PRIMARY KEY,
  value TEXT NOT NULL UNIQUE
);
CREATE TABLE run (
  id                 INTEGER PRIMARY KEY CHECK (id = 1),
  command_line       TEXT NOT NULL DEFAULT '',
  host               TEXT NOT NULL DEFAULT '',
  torchscope_version TEXT NOT NULL DEFAULT '',
  python_version     TEXT NOT NULL DEFAULT '',
  torch_version      TEXT NOT NULL DEFAULT '',
  cuda_version       TEXT NOT NULL DEFAULT '',
  driver_version     TEXT NOT NULL DEFAULT '',
  gpu_name           TEXT NOT NULL DEFAULT '',
  start_ns           INTEGER NOT NULL DEFAULT 0,
  start_wall_ns      INTEGER NOT NULL DEFAULT 0,
  end_ns             INTEGER NOT NULL DEFAULT -1,
  exit_code          INTEGER NOT NULL DEFAULT -1,
  source             TEXT NOT NULL DEFAULT ''
);
CREATE TABLE run_attributes (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE processes (
  pid          INTEGER PRIMARY KEY,
  parent_pid   INTEGER NOT NULL,
  name         TEXT NOT NULL,
  command_line TEXT NOT NULL,
  rank         INTEGER NOT NULL,
  local_rank   INTEGER NOT NULL,
  world_size   INTEGER NOT NULL,
  start_ns     INTEGER NOT NULL,
  end_ns       INTEGER NOT NULL
);
CREATE TABLE threads (
  pid  INTEGER NOT NULL,
  tid  INTEGER NOT NULL,
  name TEXT NOT NULL,
  PRIMARY KEY (pid, tid)
);
CREATE TABLE devices (
  device               INTEGER PRIMARY KEY,
  name                 TEXT NOT NULL,
  compute_major        INTEGER NOT NULL,
  compute_minor        INTEGER NOT NULL,
  total_memory_bytes   INTEGER NOT NULL,
  multiprocessor_count INTEGER NOT NULL,
  properties           TEXT NOT NULL
);
CREATE TABLE api_calls (
  id             INTEGER PRIMARY KEY,
  pid            INTEGER NOT NULL,
  tid            INTEGER NOT NULL,
  start_ns       INTEGER NOT NULL,
  end_ns         INTEGER NOT NULL,
  name_id        INTEGER NOT NULL REFERENCES strings(id),
  api            TEXT NOT NULL,
  cbid           INTEGER NOT NULL,
  correlation_id INTEGER NOT NULL,
  return_code    INTEGER NOT NULL
);
CREATE TABLE kernels (
  id                   INTEGER PRIMARY KEY,
  pid                  INTEGER NOT NULL,
  device               INTEGER NOT NULL,
  context              INTEGER NOT NULL,
  stream               INTEGER NOT NULL,
  start_ns             INTEGER NOT NULL,
  end_ns               INTEGER NOT NULL,
  name_id              INTEGER NOT NULL REFERENCES strings(id),
  correlation_id       INTEGER NOT NULL,
  grid_x               INTEGER NOT NULL,
  grid_y               INTEGER NOT NULL,
  grid_z               INTEGER NOT NULL,
  block_x              INTEGER NOT NULL,
  block_y              INTEGER NOT NULL,
  block_z              INTEGER NOT NULL,
  registers_per_thread INTEGER NOT NULL,
  static_shared_bytes  INTEGER NOT NULL,
  dynamic_shared_bytes INTEGER NOT NULL
);
CREATE TABLE memcpy (
  id             INTEGER PRIMARY KEY,
  pid            INTEGER NOT NULL,
  device         INTEGER NOT NULL,
  stream         INTEGER NOT NULL,
  start_ns       INTEGER NOT NULL,
  end_ns         INTEGER NOT NULL,
  copy_kind      TEXT NOT NULL,
  bytes          INTEGER NOT NULL,
  src_kind       TEXT NOT NULL,
  dst_kind       TEXT NOT NULL,
  pageable       INTEGER NOT NULL,
  async          INTEGER NOT NULL,
  correlation_id INTEGER NOT NULL
);
CREATE TABLE memset (
  id             INTEGER PRIMARY KEY,
  pid            INTEGER NOT NULL,
  device         INTEGER NOT NULL,
  stream         INTEGER NOT NULL,
  start_ns       INTEGER NOT NULL,
  end_ns         INTEGER NOT NULL,
  bytes          INTEGER NOT NULL,
  value          INTEGER NOT NULL,
  memory_kind    TEXT NOT NULL,
  correlation_id INTEGER NOT NULL
);
CREATE TABLE syncs (
  id             INTEGER PRIMARY KEY,
  pid            INTEGER NOT NULL,
  tid            INTEGER NOT NULL,
  start_ns       INTEGER NOT NULL,
  end_ns         INTEGER NOT NULL,
  sync_kind      TEXT NOT NULL,
  origin         TEXT NOT NULL,
  op_id          INTEGER NOT NULL REFERENCES strings(id),
  stream         INTEGER NOT NULL,
  correlation_id INTEGER NOT NULL,
  file_id        INTEGER NOT NULL REFERENCES strings(id),
  line           INTEGER NOT NULL,
  function       TEXT NOT NULL,
  stack          TEXT NOT NULL
);
CREATE TABLE nvtx (
  id        INTEGER PRIMARY KEY,
  pid       INTEGER NOT NULL,
  tid       INTEGER NOT NULL,
  start_ns  INTEGER NOT NULL,
  end_ns    INTEGER NOT NULL,
  name_id   INTEGER NOT NULL REFERENCES strings(id),
  domain_id INTEGER NOT NULL REFERENCES strings(id),
  kind      TEXT NOT NULL
);
CREATE TABLE cpu_ops (
  id             INTEGER PRIMARY KEY,
  pid            INTEGER NOT NULL,
  tid            INTEGER NOT NULL,
  start_ns       INTEGER NOT NULL,
  end_ns         INTEGER NOT NULL,
  name_id        INTEGER NOT NULL REFERENCES strings(id),
  category       TEXT NOT NULL,
  correlation_id INTEGER NOT NULL,
  args           TEXT NOT NULL
);
CREATE TABLE compiles (
  id                   INTEGER PRIMARY KEY,
  pid                  INTEGER NOT NULL,
  frame_id             INTEGER NOT NULL,
  frame_compile_id     INTEGER NOT NULL,
  attempt              INTEGER NOT NULL,
  compiled_autograd_id INTEGER NOT NULL,
  co_name              TEXT NOT NULL,
  co_filename          TEXT NOT NULL,
  co_firstlineno       INTEGER NOT NULL,
  start_ns             INTEGER NOT NULL,
  end_ns               INTEGER NOT NULL,
  dynamo_ns            INTEGER NOT NULL,
  aot_ns               INTEGER NOT NULL,
  inductor_ns          INTEGER NOT NULL,
  graph_count          INTEGER NOT NULL,
  graph_op_count       INTEGER NOT NULL,
  graph_node_count     INTEGER NOT NULL,
  guard_count          INTEGER NOT NULL,
  cache_size           INTEGER NOT NULL,
  cache_hit            INTEGER NOT NULL,
  status               TEXT NOT NULL,
  fail_type            TEXT NOT NULL,
  fail_reason          TEXT NOT NULL,
  restart_reasons      TEXT NOT NULL
);
CREATE TABLE graph_breaks (
  id               INTEGER PRIMARY KEY,
  pid              INTEGER NOT NULL,
  frame_id         INTEGER NOT NULL,
  frame_compile_id INTEGER NOT NULL,
  attempt          INTEGER NOT NULL,
  ts_ns            INTEGER NOT NULL,
  break_type       TEXT NOT NULL,
  reason           TEXT NOT NULL,
  explanation      TEXT NOT NULL,
  hints            TEXT NOT NULL,
  file             TEXT NOT NULL,
  line             INTEGER NOT NULL,
  function         TEXT NOT NULL,
  user_stack       TEXT NOT NULL,
  stack            TEXT NOT NULL,
  gb_id            TEXT NOT NULL,
  frame_skipped    INTEGER NOT NULL
);
CREATE TABLE recompiles (
  id               INTEGER PRIMARY KEY,
  pid              INTEGER NOT NULL,
  frame_id         INTEGER NOT NULL,
  frame_compile_id INTEGER NOT NULL,
  ts_ns            INTEGER NOT NULL,
  co_name          TEXT NOT NULL,
  co_filename      TEXT NOT NULL,
  co_firstlineno   INTEGER NOT NULL,
  guard_failures   TEXT NOT NULL,
  cause            TEXT NOT NULL,
  cache_size       INTEGER NOT NULL,
  limit_hit        INTEGER NOT NULL,
  cause_detail     TEXT NOT NULL,
  stack            TEXT NOT NULL,
  entry_file       TEXT NOT NULL,
  entry_line       INTEGER NOT NULL,
  value_kind       TEXT NOT NULL,
  value_file       TEXT NOT NULL,
  value_line       INTEGER NOT NULL
);
CREATE TABLE steps (
  id       INTEGER PRIMARY KEY,
  pid      INTEGER NOT NULL,
  tid      INTEGER NOT NULL,
  step     INTEGER NOT NULL,
  start_ns INTEGER NOT NULL,
  end_ns   INTEGER NOT NULL,
  source   TEXT NOT NULL
);
CREATE TABLE findings (
  id              INTEGER PRIMARY KEY,
  rule            TEXT NOT NULL,
  severity        TEXT NOT NULL,
  title           TEXT NOT NULL,
  message         TEXT NOT NULL,
  file            TEXT NOT NULL,
  line            INTEGER NOT NULL,
  function        TEXT NOT NULL,
  count           INTEGER NOT NULL,
  impact_seconds  REAL NOT NULL,
  impact_fraction REAL NOT NULL,
  evidence        TEXT NOT NULL,
  fix_id          TEXT NOT NULL,
  fix_summary     TEXT NOT NULL,
  fix_kind        TEXT NOT NULL
);
CREATE TABLE fix_experiments (
  id                      INTEGER PRIMARY KEY,
  fix_id                  TEXT NOT NULL,
  kind                    TEXT NOT NULL,
  accepted                INTEGER NOT NULL,
  reason                  TEXT NOT NULL,
  repetitions             INTEGER NOT NULL,
  baseline_step_median_s  REAL NOT NULL,
  candidate_step_median_s REAL NOT NULL,
  speedup_median          REAL NOT NULL,
  speedup_ci_low          REAL NOT NULL,
  speedup_ci_high         REAL NOT NULL,
  total_speedup           REAL NOT NULL,
  compile_time_delta_s    REAL NOT NULL,
  recompiles_after        INTEGER NOT NULL,
  graph_breaks_after      INTEGER NOT NULL,
  syncs_after             INTEGER NOT NULL,
  parity_ok               INTEGER NOT NULL,
  max_rel_diff            REAL NOT NULL,
  diff                    TEXT NOT NULL,
  details                 TEXT NOT NULL
);
CREATE TABLE memory_samples (
  id     INTEGER PRIMARY KEY,
  pid    INTEGER NOT NULL,
  device INTEGER NOT NULL,
  series TEXT NOT NULL,
  ts_ns  INTEGER NOT NULL,
  step   INTEGER NOT NULL,
  value  INTEGER NOT NULL
);
CREATE TABLE memory_events (
  id              INTEGER PRIMARY KEY,
  pid             INTEGER NOT NULL,
  device          INTEGER NOT NULL,
  ts_ns           INTEGER NOT NULL,
  operation       TEXT NOT NULL,
  bytes           INTEGER NOT NULL,
  address         INTEGER NOT NULL,
  memory_kind     TEXT NOT NULL,
  stream          INTEGER NOT NULL,
  correlation_id  INTEGER NOT NULL,
  total_allocated INTEGER NOT NULL,
  total_reserved  INTEGER NOT NULL,
  file            TEXT NOT NULL,
  line            INTEGER NOT NULL,
  function        TEXT NOT NULL
);
CREATE TABLE memory_holders (
  id          INTEGER PRIMARY KEY,
  pid         INTEGER NOT NULL,
  ts_ns       INTEGER NOT NULL,
  step        INTEGER NOT NULL,
  kind        TEXT NOT NULL,
  name        TEXT NOT NULL,
  file        TEXT NOT NULL,
  line        INTEGER NOT NULL,
  function    TEXT NOT NULL,
  first_step  INTEGER NOT NULL,
  size_before INTEGER NOT NULL,
  size_after  INTEGER NOT NULL,
  bytes       INTEGER NOT NULL,
  stack       TEXT NOT NULL
);
CREATE TABLE stack_frames (
  id       INTEGER PRIMARY KEY,
  file     TEXT NOT NULL,
  line     INTEGER NOT NULL,
  function TEXT NOT NULL
);
CREATE TABLE stacks (
  id        INTEGER PRIMARY KEY,
  parent_id INTEGER NOT NULL,
  frame_id  INTEGER NOT NULL REFERENCES stack_frames(id)
);
CREATE TABLE stack_samples (
  id       INTEGER PRIMARY KEY,
  pid      INTEGER NOT NULL,
  tid      INTEGER NOT NULL,
  step     INTEGER NOT NULL,
  stack_id INTEGER NOT NULL REFERENCES stacks(id),
  samples  INTEGER NOT NULL,
  wall_ns  INTEGER NOT NULL,
  cpu_ns   INTEGER NOT NULL
);
CREATE TABLE diagnostics (
  id       INTEGER PRIMARY KEY,
  source   TEXT NOT NULL,
  severity TEXT NOT NULL,
  message  TEXT NOT NULL,
  count    INTEGER NOT NULL
);
CREATE VIEW api_calls_v AS
  SELECT a.*, s.value AS name FROM api_calls a JOIN strings s ON s.id = a.name_id;
CREATE VIEW kernels_v AS
  SELECT k.*, s.value AS name FROM kernels k JOIN strings s ON s.id = k.name_id;
CREATE VIEW syncs_v AS
  SELECT y.*, o.value AS op, f.value AS file
  FROM syncs y JOIN strings o ON o.id = y.op_id JOIN strings f ON f.id = y.file_id;
CREATE VIEW nvtx_v AS
  SELECT n.*, s.value AS name, d.value AS domain
  FROM nvtx n JOIN strings s ON s.id = n.name_id JOIN strings d ON d.id = n.domain_id;
CREATE VIEW cpu_ops_v AS
  SELECT c.*, s.value AS name FROM cpu_ops c JOIN strings s ON s.id = c.name_id;
)sql";

constexpr std::string_view kIndexes = R"sql(
CREATE INDEX IF NOT EXISTS api_calls_time ON api_calls(start_ns);
CREATE INDEX IF NOT EXISTS api_calls_correlation ON api_calls(pid, correlation_id);
CREATE INDEX IF NOT EXISTS kernels_time ON kernels(start_ns);
CREATE INDEX IF NOT EXISTS kernels_correlation ON kernels(pid, correlation_id);
CREATE INDEX IF NOT EXISTS memcpy_time ON memcpy(start_ns);
CREATE INDEX IF NOT EXISTS memcpy_correlation ON memcpy(pid, correlation_id);
CREATE INDEX IF NOT EXISTS memset_time ON memset(start_ns);
CREATE INDEX IF NOT EXISTS memset_correlation ON memset(pid, correlation_id);
CREATE INDEX IF NOT EXISTS syncs_time ON syncs(start_ns);
CREATE INDEX IF NOT EXISTS nvtx_time ON nvtx(start_ns);
CREATE INDEX IF NOT EXISTS cpu_ops_time ON cpu_ops(start_ns);
CREATE INDEX IF NOT EXISTS compiles_frame ON compiles(pid, frame_id, frame_compile_id);
CREATE INDEX IF NOT EXISTS steps_time ON steps(start_ns);
CREATE INDEX IF NOT EXISTS memory_samples_series ON memory_samples(series, device, ts_ns);
CREATE INDEX IF NOT EXISTS memory_events_time ON memory_events(ts_ns);
CREATE INDEX IF NOT EXISTS stack_samples_step ON stack_samples(step, tid);
)sql";

}  // namespace

// clang-format off
std::vector<std::string_view> tableNames() {
  return {"strings",  "run",    "run_attributes", "processes", "threads",      "devices",    "api_calls",
          "kernels",  "memcpy", "memset",         "syncs",     "nvtx",         "cpu_ops",    "compiles",
          "graph_breaks", "recompiles", "steps",  "findings",  "fix_experiments", "memory_samples",
          "memory_events", "memory_holders", "stack_frames", "stacks", "stack_samples", "diagnostics"};
}
// clang-format on

std::string_view schemaSql() { return kSchema; }
std::string_view indexSql() { return kIndexes; }

}  // namespace torchscope::store
