#include "Sqlite.h"

#include <string>

namespace torchscope::store::sqlite {

ErrorCode errorCodeFor(int sqlite_code) {
  switch (sqlite_code & 0xff) {
    case SQLITE_NOTADB:
      return ErrorCode::kNotTorchscope;
    case SQLITE_CORRUPT:
      return ErrorCode::kCorrupt;
    case SQLITE_CANTOPEN:
      return ErrorCode::kNotFound;
    default:
      return ErrorCode::kIo;
  }
}

Result<Database> Database::open(const std::string& path, int flags) {
  Database db;
  const int rc = sqlite3_open_v2(path.c_str(), &db.db_, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    return db.error(path + ": cannot open", rc);
  }
  sqlite3_extended_result_codes(db.db_, 1);
  sqlite3_busy_timeout(db.db_, 5000);
  return db;
}

Result<void> Database::exec(std::string_view sql) {
  char* message = nullptr;
  const int rc = sqlite3_exec(db_, std::string(sql).c_str(), nullptr, nullptr, &message);
  if (rc != SQLITE_OK) {
    std::string text = message ? message : sqlite3_errstr(rc);
    sqlite3_free(message);
    return Error{errorCodeFor(rc), text};
  }
  return {};
}

Result<Statement> Database::prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &stmt,
                                    nullptr);
  if (rc != SQLITE_OK) {
    // A store that passed its version check but lacks a table or column this build reads: damaged or
    // edited by hand. SQLite's reason names what is missing; the statement itself means nothing to a user.
    return Error{ErrorCode::kCorrupt, std::string("a damaged store (") + sqlite3_errmsg(db_) + ")"};
  }
  return Statement(stmt);
}

Result<std::int64_t> Database::queryInt(std::string_view sql) {
  auto stmt = prepare(sql);
  if (!stmt) return stmt.error();
  const int rc = stmt->step();
  if (rc == SQLITE_ROW) return stmt->columnInt(0);
  if (rc == SQLITE_DONE) return std::int64_t{0};
  return error("query failed", rc);
}

Error Database::error(std::string_view what) const { return error(what, db_ ? sqlite3_errcode(db_) : SQLITE_ERROR); }

Error Database::error(std::string_view what, int code) const {
  const std::string reason = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(code);
  const int primary = code & 0xff;
  // SQLite's "database disk image is malformed" says nothing to a user of a store: say what happened to the file.
  if (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB) {
    return Error{errorCodeFor(code),
                 std::string(what) + ": a damaged store, cut short or overwritten (SQLite: " + reason + ")"};
  }
  return Error{errorCodeFor(code), std::string(what) + " (" + reason + ")"};
}

}  // namespace torchscope::store::sqlite
