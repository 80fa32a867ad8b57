// Opening and checking store files: shared by the writer (append mode) and the reader.
#pragma once

#include <string>

#include "Sqlite.h"
#include "torchscope/base/Result.h"

namespace torchscope::store {

// Checks that `db` is a torchscope store this build can read; returns its schema version.
[[nodiscard]] Result<std::int32_t> checkStoreFile(sqlite::Database& db, const std::string& path);

// Opens an existing store, with a clear error for a missing, foreign, newer or damaged file.
[[nodiscard]] Result<sqlite::Database> openStoreFile(const std::string& path, bool writable);

}  // namespace torchscope::store
