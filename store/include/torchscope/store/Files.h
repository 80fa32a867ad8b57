// The files the commands read and write, checked one way for every command: one cause, one error code, one
// message ("PATH: what is wrong (what to do)"). An output never destroys anything: it is refused when it is one
// of the inputs or not a regular file, and it is written under a temporary name beside the target and renamed
// over it only once complete.
#pragma once

#include <sys/types.h>

#include <memory>
#include <ostream>
#include <streambuf>
#include <string>
#include <string_view>
#include <vector>

#include "torchscope/base/Result.h"

namespace torchscope::store {

// A file the user named as input: kNotFound when it is missing, kInvalidArgument when it is not a regular file
// (a directory, a FIFO, a device, a symbolic link loop), kIo when the system refuses to read it (permissions).
[[nodiscard]] Result<void> checkInputFile(const std::string& path);

// Checked before anything is read or written: kInvalidArgument when `output` is the same file as one of `inputs`
// (same device and inode, or the same path), when it exists and is not a regular file (a directory, a FIFO, a
// device), or when its directory does not exist.
[[nodiscard]] Result<void> checkOutputFile(const std::string& output, const std::vector<std::string>& inputs);

// Where a replacement of `target` is written: beside the file it will replace (a symbolic link's target), so that
// rename() replaces it in one step.
[[nodiscard]] std::string temporaryPathBeside(const std::string& target);

// Renames the complete file `written` over `target` (a symbolic link's target); `written` is removed when the
// rename fails.
[[nodiscard]] Result<void> renameOver(const std::string& written, const std::string& target);
// The same for a closed store, but a symbolic link at `target` is replaced, not followed (a link planted in a
// shared directory never redirects a store); the target's stale -wal, -shm and -journal files go first, so that
// SQLite never applies them to the new file.
[[nodiscard]] Result<void> renameStoreOver(const std::string& written, const std::string& target);

// Writes straight to a file descriptor and keeps the errno of the first failed write, which std::ofstream and
// stdio lose: what a command tells the user when its output could not be written.
class DescriptorBuffer final : public std::streambuf {
 public:
  explicit DescriptorBuffer(int fd);
  // 0 while every write succeeded, else the errno of the first that failed (nothing is written after it).
  [[nodiscard]] int error() const { return error_; }

 protected:
  int_type overflow(int_type c) override;
  int sync() override;

 private:
  void resetArea();
  bool drain();

  int fd_;
  std::vector<char> buffer_;
  int error_ = 0;
};

// A file replaced whole: open() creates a temporary file beside the target, stream() writes it, commit() renames
// it over the target. Destroyed without a commit, it removes the temporary file and leaves the target as it was.
// The new file keeps the mode of the file it replaces (else `mode`, less the umask).
class FileReplacement {
 public:
  [[nodiscard]] static Result<FileReplacement> open(const std::string& target, mode_t mode = 0666);
  FileReplacement(FileReplacement&&) noexcept;
  FileReplacement& operator=(FileReplacement&&) noexcept;
  ~FileReplacement();

  std::ostream& stream();
  // Flushes, syncs and closes the temporary file, then renames it over the target; kIo with the system's reason
  // (a full disk, a quota) when any of it fails.
  [[nodiscard]] Result<void> commit();

 private:
  struct Impl;
  explicit FileReplacement(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// `text` as the whole new content of `path`, through a FileReplacement.
[[nodiscard]] Result<void> replaceFile(const std::string& path, std::string_view text, mode_t mode = 0666);

}  // namespace torchscope::store
