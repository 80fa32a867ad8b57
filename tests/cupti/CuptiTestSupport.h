// Synthetic CUPTI records built from the installed structs; stores go to a TempDir (tests/support).
#pragma once

#include <cupti.h>
#include <cstdint>
#include <string>

#include "torchscope/testing/TempDir.h"

namespace torchscope::cupti::testing {

inline CUpti_ActivityKernel10 kernelRecord(std::uint32_t correlation, std::uint64_t start, std::uint64_t end,
                                           const char* name) {
  CUpti_ActivityKernel10 k{};
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.start = start;
  k.end = end;
  k.deviceId = 1;
  k.contextId = 7;
  k.streamId = 13;
  k.gridX = 64, k.gridY = 2, k.gridZ = 1;
  k.blockX = 256, k.blockY = 1, k.blockZ = 1;
  k.registersPerThread = 32;
  k.staticSharedMemory = 1024;
  k.dynamicSharedMemory = 2048;
  k.correlationId = correlation;
  k.name = name;
  return k;
}

inline CUpti_ActivityMemcpy6 memcpyRecord(std::uint32_t correlation, std::uint8_t copy_kind, std::uint8_t src,
                                          std::uint8_t dst, bool async) {
  CUpti_ActivityMemcpy6 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = copy_kind;
  m.srcKind = src;
  m.dstKind = dst;
  m.flags = async ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : 0;
  m.bytes = 4096;
  m.start = 5000;
  m.end = 6000;
  m.deviceId = 0;
  m.contextId = 7;
  m.streamId = 7;
  m.correlationId = correlation;
  return m;
}

inline CUpti_ActivityAPI runtimeRecord(std::uint32_t correlation, CUpti_CallbackId cbid, std::uint64_t start,
                                       std::uint64_t end) {
  CUpti_ActivityAPI a{};
  a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  a.cbid = cbid;
  a.start = start;
  a.end = end;
  a.processId = 4242;
  a.threadId = 4343;
  a.correlationId = correlation;
  return a;
}

inline CUpti_ActivitySynchronization2 syncRecord(std::uint32_t correlation, CUpti_ActivitySynchronizationType type) {
  CUpti_ActivitySynchronization2 s{};
  s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  s.type = type;
  s.start = 7000;
  s.end = 9000;
  s.correlationId = correlation;
  s.contextId = 7;
  s.streamId = 3;
  return s;
}

inline CUpti_ActivityMarker2 markerRecord(std::uint32_t id, std::uint32_t flags, std::uint64_t timestamp,
                                          const char* name, const char* domain = nullptr) {
  CUpti_ActivityMarker2 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MARKER;
  m.flags = static_cast<CUpti_ActivityFlag>(flags);
  m.timestamp = timestamp;
  m.id = id;
  m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  m.objectId.pt.processId = 4242;
  m.objectId.pt.threadId = 4343;
  m.name = name;
  m.domain = domain;
  return m;
}

using torchscope::testing::TempDir;

}  // namespace torchscope::cupti::testing
