// Thin RAII wrappers over the SQLite C API, private to the store.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "torchscope/base/Result.h"

namespace torchscope::store::sqlite {

class Statement {
 public:
  Statement() = default;
  explicit Statement(sqlite3_stmt* stmt) : stmt_(stmt) {}
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(Statement&& other) noexcept : stmt_(other.stmt_), bound_(std::move(other.bound_)) {
    other.stmt_ = nullptr;
  }
  Statement& operator=(Statement&& other) noexcept {
    std::swap(stmt_, other.stmt_);
    std::swap(bound_, other.bound_);
    return *this;
  }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  void bind(int index, std::int64_t value) { sqlite3_bind_int64(stmt_, index, value); }
  void bind(int index, double value) { sqlite3_bind_double(stmt_, index, value); }
  void bind(int index, bool value) { sqlite3_bind_int64(stmt_, index, value ? 1 : 0); }
  // bind(), skipped when the parameter already holds `value`: bindings outlive reset(), and the rows a
  // writer inserts repeat most of their integers (process, device, launch geometry) row after row.
  // A parameter bound this way must never be bound another way.
  void bindIfChanged(int index, std::int64_t value) {
    const auto slot = static_cast<std::size_t>(index);
    if (slot >= bound_.size()) bound_.resize(slot + 1);
    if (bound_[slot].bound && bound_[slot].value == value) return;
    sqlite3_bind_int64(stmt_, index, value);
    bound_[slot] = {value, true};
  }
  // The text must outlive the next step(): SQLITE_STATIC avoids a copy per row.
  void bind(int index, std::string_view text) {
    sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_STATIC);
  }

  // SQLITE_ROW, SQLITE_DONE or an error code.
  int step() { return sqlite3_step(stmt_); }
  void reset() { sqlite3_reset(stmt_); }

  std::int64_t columnInt(int index) const { return sqlite3_column_int64(stmt_, index); }
  double columnDouble(int index) const { return sqlite3_column_double(stmt_, index); }
  std::string columnText(int index) const {
    const auto* text = sqlite3_column_text(stmt_, index);
    return text ? std::string(reinterpret_cast<const char*>(text), static_cast<std::size_t>(sqlite3_column_bytes(stmt_, index)))
                : std::string();
  }

  sqlite3_stmt* get() const { return stmt_; }

 private:
  struct BoundInteger {
    std::int64_t value = 0;
    bool bound = false;
  };
  sqlite3_stmt* stmt_ = nullptr;
  std::vector<BoundInteger> bound_;  // by parameter index, for bindIfChanged()
};

class Database {
 public:
  Database() = default;
  ~Database() { sqlite3_close_v2(db_); }
  Database(Database&& other) noexcept : db_(other.db_) { other.db_ = nullptr; }
  Database& operator=(Database&& other) noexcept {
    std::swap(db_, other.db_);
    return *this;
  }
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  [[nodiscard]] static Result<Database> open(const std::string& path, int flags);

  [[nodiscard]] Result<void> exec(std::string_view sql);
  [[nodiscard]] Result<Statement> prepare(std::string_view sql);
  // The first column of the first row, as an integer.
  [[nodiscard]] Result<std::int64_t> queryInt(std::string_view sql);

  [[nodiscard]] Error error(std::string_view what) const;
  [[nodiscard]] Error error(std::string_view what, int code) const;
  sqlite3* get() const { return db_; }

 private:
  sqlite3* db_ = nullptr;
};

// Maps a SQLite result code to the store's error codes.
ErrorCode errorCodeFor(int sqlite_code);

}  // namespace torchscope::store::sqlite
