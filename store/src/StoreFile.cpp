#include "StoreFile.h"

#include "torchscope/store/Files.h"
#include "torchscope/store/Schema.h"

namespace torchscope::store {

Result<std::int32_t> checkStoreFile(sqlite::Database& db, const std::string& path) {
  auto app_id = db.queryInt("PRAGMA application_id");
  if (!app_id) {
    if (app_id.error().code == ErrorCode::kNotTorchscope) {
      return makeError(ErrorCode::kNotTorchscope, path + ": not a torchscope store (not an SQLite database)");
    }
    return makeError(app_id.error().code, path + ": " + app_id.error().message);
  }
  if (*app_id != kApplicationId) {
    return makeError(ErrorCode::kNotTorchscope, path + ": an SQLite database but not a torchscope store");
  }
  auto version = db.queryInt("PRAGMA user_version");
  if (!version) return makeError(version.error().code, path + ": " + version.error().message);
  if (*version > kSchemaVersion) {
    return makeError(ErrorCode::kVersion, path + ": store schema v" + std::to_string(*version) +
                                              ", newer than this torchscope reads (v" + std::to_string(kSchemaVersion) +
                                              "; upgrade torchscope)");
  }
  if (*version < 1) {
    return makeError(ErrorCode::kCorrupt, path + ": a store that was never initialised (no schema version; record the run again)");
  }
  if (*version < kOldestReadableVersion) {
    return makeError(ErrorCode::kVersion, path + ": store schema v" + std::to_string(*version) +
                                              ", which this torchscope no longer reads (it reads v" +
                                              std::to_string(kOldestReadableVersion) + " to v" +
                                              std::to_string(kSchemaVersion) + "; record the run again)");
  }
  // Touch the schema so that a damaged file fails here and not in the middle of an analysis.
  auto tables = db.queryInt("SELECT count(*) FROM sqlite_master WHERE type = 'table'");
  if (!tables) return makeError(tables.error().code, path + ": " + tables.error().message);
  return static_cast<std::int32_t>(*version);
}

Result<sqlite::Database> openStoreFile(const std::string& path, bool writable) {
  if (auto readable = checkInputFile(path); !readable) return readable.error();
  auto db = sqlite::Database::open(path, writable ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY);
  if (!db) return db.error();
  auto version = checkStoreFile(*db, path);
  if (!version) return version.error();
  return db;
}

}  // namespace torchscope::store
