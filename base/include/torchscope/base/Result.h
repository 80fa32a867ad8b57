// Result<T>: a value or an Error, for APIs that must not throw across module boundaries.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace torchscope {

enum class ErrorCode {
  kInvalidArgument,  // bad input from the caller or the user
  kNotFound,         // a file or row that does not exist
  kNotTorchscope,    // a file that is not a torchscope store
  kVersion,          // a store written by a newer schema version
  kCorrupt,          // a damaged file
  kIo,               // the operating system or SQLite refused (disk full, permissions)
  kUnsupported,      // a feature not built in or not available on this machine
};

struct Error {
  ErrorCode code = ErrorCode::kInvalidArgument;
  std::string message;
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}      // NOLINT: implicit by design
  Result(Error error) : state_(std::move(error)) {}  // NOLINT

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }

  const Error& error() const { return std::get<Error>(state_); }

 private:
  std::variant<T, Error> state_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return error_; }

 private:
  Error error_;
  bool ok_ = true;
};

inline Error makeError(ErrorCode code, std::string message) { return Error{code, std::move(message)}; }

// The error with "path: " in front, unless its message already starts with it: a message names its file once.
inline Error aboutFile(const std::string& path, Error error) {
  if (error.message.rfind(path + ":", 0) != 0) error.message = path + ": " + error.message;
  return error;
}

}  // namespace torchscope
