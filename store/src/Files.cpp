#include "torchscope/store/Files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <streambuf>
#include <vector>

namespace torchscope::store {

namespace fs = std::filesystem;

namespace {

std::string reasonOf(int error) { return error == EACCES || error == EPERM ? "permission denied" : std::strerror(error); }

std::string absoluteNormal(const std::string& path) {
  std::error_code error;
  const fs::path absolute = fs::absolute(path, error);
  return (error ? fs::path(path) : absolute).lexically_normal().string();
}

// The file a write to `target` replaces: a symbolic link's target, so that the link keeps pointing at it.
std::string resolvedTarget(const std::string& target) {
  std::error_code error;
  if (!fs::is_symlink(target, error)) return target;
  const fs::path resolved = fs::weakly_canonical(target, error);
  return error ? target : resolved.string();
}

bool sameFile(const std::string& a, const struct stat& a_info, const std::string& b) {
  if (absoluteNormal(a) == absoluteNormal(b)) return true;
  struct stat b_info {};
  return ::stat(b.c_str(), &b_info) == 0 && b_info.st_dev == a_info.st_dev && b_info.st_ino == a_info.st_ino;
}

}  // namespace

DescriptorBuffer::DescriptorBuffer(int fd) : fd_(fd), buffer_(std::size_t{1} << 16) { resetArea(); }

DescriptorBuffer::int_type DescriptorBuffer::overflow(int_type c) {
  if (!drain()) return traits_type::eof();
  if (!traits_type::eq_int_type(c, traits_type::eof())) {
    *pptr() = traits_type::to_char_type(c);
    pbump(1);
  }
  return traits_type::not_eof(c);
}

int DescriptorBuffer::sync() { return drain() ? 0 : -1; }

void DescriptorBuffer::resetArea() { setp(buffer_.data(), buffer_.data() + buffer_.size()); }

bool DescriptorBuffer::drain() {
  for (const char* at = pbase(); error_ == 0 && at < pptr();) {
    const ssize_t written = ::write(fd_, at, static_cast<std::size_t>(pptr() - at));
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) error_ = written < 0 ? errno : EIO;
    if (written > 0) at += written;
  }
  resetArea();
  return error_ == 0;
}

Result<void> checkInputFile(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    const int error = errno;
    if (error == ENOENT || error == ENOTDIR) return makeError(ErrorCode::kNotFound, path + ": no such file");
    if (error == ELOOP) {
      return makeError(ErrorCode::kInvalidArgument, path + ": a loop of symbolic links (point the link at a file)");
    }
    return makeError(ErrorCode::kIo, path + ": cannot read (" + reasonOf(error) + ")");
  }
  if (S_ISDIR(info.st_mode)) return makeError(ErrorCode::kInvalidArgument, path + ": a directory, not a file");
  if (!S_ISREG(info.st_mode)) {
    return makeError(ErrorCode::kInvalidArgument,
                     path + ": not a regular file (a FIFO, device or socket; copy its content to a file first)");
  }
  if (::access(path.c_str(), R_OK) != 0) {
    return makeError(ErrorCode::kIo, path + ": cannot read (" + reasonOf(errno) + ")");
  }
  return {};
}

Result<void> checkOutputFile(const std::string& output, const std::vector<std::string>& inputs) {
  struct stat info {};
  const bool exists = ::stat(output.c_str(), &info) == 0;
  if (!exists && errno == ELOOP) {
    return makeError(ErrorCode::kInvalidArgument, output + ": a loop of symbolic links (name a file to write)");
  }
  for (const auto& input : inputs) {
    if (absoluteNormal(input) == absoluteNormal(output) || (exists && sameFile(output, info, input))) {
      return makeError(ErrorCode::kInvalidArgument,
                       output + ": this is also an input of the command (write the output to another file)");
    }
  }
  if (exists && S_ISDIR(info.st_mode)) {
    return makeError(ErrorCode::kInvalidArgument, output + ": a directory (name a file to write)");
  }
  if (exists && !S_ISREG(info.st_mode)) {
    return makeError(ErrorCode::kInvalidArgument,
                     output + ": not a regular file (torchscope writes only regular files; name one, or - for "
                              "standard output where the command has it)");
  }
  if (!exists) {
    const fs::path directory = fs::path(output).parent_path();
    std::error_code error;
    if (!directory.empty() && !fs::is_directory(directory, error)) {
      return makeError(ErrorCode::kInvalidArgument, output + ": its directory does not exist (create it first)");
    }
  }
  return {};
}

std::string temporaryPathBeside(const std::string& target) {
  static unsigned counter = 0;
  return resolvedTarget(target) + ".torchscope.tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
}

Result<void> renameOver(const std::string& written, const std::string& target) {
  const std::string resolved = resolvedTarget(target);
  if (::rename(written.c_str(), resolved.c_str()) != 0) {
    const std::string reason = reasonOf(errno);
    ::unlink(written.c_str());
    return makeError(ErrorCode::kIo, target + ": cannot write (" + reason + ")");
  }
  return {};
}

Result<void> renameStoreOver(const std::string& written, const std::string& target) {
  for (const char* suffix : {"-wal", "-shm", "-journal"}) {
    const std::string stale = target + suffix;
    struct stat info {};
    if (::lstat(stale.c_str(), &info) == 0 && S_ISREG(info.st_mode) && ::unlink(stale.c_str()) != 0) {
      const std::string reason = reasonOf(errno);
      ::unlink(written.c_str());
      return makeError(ErrorCode::kIo, target + ": cannot replace " + stale + " (" + reason + ")");
    }
  }
  if (::rename(written.c_str(), target.c_str()) != 0) {
    const std::string reason = reasonOf(errno);
    ::unlink(written.c_str());
    return makeError(ErrorCode::kIo, target + ": cannot write (" + reason + ")");
  }
  return {};
}

struct FileReplacement::Impl {
  std::string target;
  std::string temporary;
  int fd = -1;
  mode_t keep_mode = 0;  // the replaced file's mode; 0 for a new file
  DescriptorBuffer buffer;
  std::ostream out;
  bool committed = false;

  Impl(std::string target_path, std::string temporary_path, int descriptor, mode_t mode)
      : target(std::move(target_path)),
        temporary(std::move(temporary_path)),
        fd(descriptor),
        keep_mode(mode),
        buffer(descriptor),
        out(&buffer) {}

  ~Impl() {
    if (fd >= 0) ::close(fd);
    if (!committed) ::unlink(temporary.c_str());
  }
};

Result<FileReplacement> FileReplacement::open(const std::string& target, mode_t mode) {
  struct stat info {};
  const bool exists = ::stat(target.c_str(), &info) == 0;
  if (exists && !S_ISREG(info.st_mode)) {
    return makeError(ErrorCode::kInvalidArgument, target + ": not a regular file (name a file to write)");
  }
  std::string temporary;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    temporary = temporaryPathBeside(target);
    fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) return makeError(ErrorCode::kIo, target + ": cannot write (" + reasonOf(errno) + ")");
  return FileReplacement(std::make_unique<Impl>(target, temporary, fd, exists ? info.st_mode & 07777 : 0));
}

FileReplacement::FileReplacement(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
FileReplacement::FileReplacement(FileReplacement&&) noexcept = default;
FileReplacement& FileReplacement::operator=(FileReplacement&&) noexcept = default;
FileReplacement::~FileReplacement() = default;

std::ostream& FileReplacement::stream() { return impl_->out; }

Result<void> FileReplacement::commit() {
  Impl& file = *impl_;
  file.out.flush();
  int error = file.buffer.error();
  if (error == 0 && !file.out) error = EIO;
  if (error == 0 && file.keep_mode != 0 && ::fchmod(file.fd, file.keep_mode) != 0) error = errno;
  if (error == 0 && ::fsync(file.fd) != 0 && errno != EINVAL) error = errno;
  if (::close(file.fd) != 0 && error == 0) error = errno;
  file.fd = -1;
  if (error != 0) return makeError(ErrorCode::kIo, file.target + ": cannot write (" + reasonOf(error) + ")");
  file.committed = true;
  return renameOver(file.temporary, file.target);
}

Result<void> replaceFile(const std::string& path, std::string_view text, mode_t mode) {
  auto file = FileReplacement::open(path, mode);
  if (!file) return file.error();
  file->stream().write(text.data(), static_cast<std::streamsize>(text.size()));
  return file->commit();
}

}  // namespace torchscope::store
