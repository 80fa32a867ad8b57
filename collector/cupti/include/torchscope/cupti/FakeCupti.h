// A CuptiApi for tests and the fuzzer: no GPU, no libcupti. Activity buffers are built from the
// installed CUPTI record structs laid end to end (SyntheticBuffer) and walked by nextRecord();
// callbacks registered by the tracer are invoked by deliver(), flushAll() and callApi().
#pragma once

#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "torchscope/cupti/CuptiApi.h"

namespace torchscope::cupti {

// Size of the struct the decoder reads for `kind`; 8 (a bare CUpti_Activity) for kinds it skips.
[[nodiscard]] std::size_t syntheticRecordSize(std::uint32_t kind);

// Records of the installed CUPTI structs, each padded to 8 bytes.
class SyntheticBuffer {
 public:
  template <class Record>
  SyntheticBuffer& add(const Record& record) {
    const std::size_t at = bytes_.size();
    bytes_.resize(at + (sizeof(Record) + 7) / 8 * 8, 0);
    std::memcpy(bytes_.data() + at, &record, sizeof(Record));
    return *this;
  }
  [[nodiscard]] const std::vector<std::uint8_t>& bytes() const { return bytes_; }

 private:
  std::vector<std::uint8_t> bytes_;
};

// cuptiActivityGetNextRecord over a synthetic buffer: records whose kind's struct would run past
// `valid_bytes` end the walk (CUPTI_ERROR_MAX_LIMIT_REACHED).
CUptiResult nextSyntheticRecord(std::uint8_t* buffer, std::size_t valid_bytes, CUpti_Activity** record);

class FakeCupti final : public CuptiApi {
 public:
  // Behaviour knobs, set before the tracer starts.
  CUptiResult subscribe_result = CUPTI_SUCCESS;
  CUptiResult timestamp_callback_result = CUPTI_SUCCESS;
  std::map<CUpti_ActivityKind, CUptiResult> enable_results;  // default CUPTI_SUCCESS
  std::int64_t cupti_clock_offset_ns = 0;                     // timestamp() = monotonic - this

  // Delivers one buffer as CUPTI would: asks the tracer for a buffer, copies `bytes` into it
  // (truncated to its size) and completes it with `dropped` records reported for it. Returns
  // false when the tracer refused the buffer.
  bool deliver(const std::vector<std::uint8_t>& bytes, std::size_t dropped = 0);
  // Queues a buffer for the next flushAll(), which delivers it from another thread.
  void queueForFlush(std::vector<std::uint8_t> bytes);
  // Asks for a buffer and keeps it (CUPTI filling it); completeHeld() hands them all back.
  bool holdBuffer();
  void completeHeld();
  // Runs `body` between the ENTER and EXIT callbacks of a runtime API call.
  void callApi(CUpti_CallbackId cbid, std::uint32_t correlation_id, const std::function<void()>& body = {});

  [[nodiscard]] std::set<CUpti_ActivityKind> enabledKinds() const;
  [[nodiscard]] bool callbackEnabled(CUpti_CallbackId cbid) const;
  // The driver calls enabled one by one (enableDriverApiRecords), as CUPTI keeps them.
  [[nodiscard]] std::set<CUpti_CallbackId> driverApiRecords() const;
  // The driver calls silenced while the DRIVER kind records the rest.
  [[nodiscard]] std::set<CUpti_CallbackId> silencedDriverApis() const;
  [[nodiscard]] bool subscribed() const;
  [[nodiscard]] int flushCount() const;

  CUptiResult enableActivity(CUpti_ActivityKind kind) override;
  CUptiResult disableActivity(CUpti_ActivityKind kind) override;
  CUptiResult enableRuntimeApiRecords(CUpti_CallbackId cbid, bool enable) override;
  CUptiResult enableDriverApiRecords(CUpti_CallbackId cbid, bool enable) override;
  CUptiResult registerBufferCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                                      CUpti_BuffersCallbackCompleteFunc completed) override;
  CUptiResult nextRecord(std::uint8_t* buffer, std::size_t valid_bytes, CUpti_Activity** record) override;
  CUptiResult droppedRecords(CUcontext context, std::uint32_t stream_id, std::size_t* dropped) override;
  CUptiResult flushAll(std::uint32_t flags) override;
  CUptiResult registerTimestampCallback(CUpti_TimestampCallbackFunc clock) override;
  CUptiResult timestamp(std::uint64_t* ns) override;
  CUptiResult subscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback, void* userdata) override;
  CUptiResult unsubscribe(CUpti_SubscriberHandle subscriber) override;
  CUptiResult enableCallback(bool enable, CUpti_SubscriberHandle subscriber, CUpti_CallbackDomain domain,
                             CUpti_CallbackId cbid) override;
  CUptiResult callbackName(CUpti_CallbackDomain domain, std::uint32_t cbid, const char** name) override;
  std::string resultText(CUptiResult result) override;
  std::string libraryPath() const override { return {}; }

 private:
  struct Held {
    std::uint8_t* buffer;
    std::size_t size;
  };
  void complete(std::uint8_t* buffer, std::size_t size, std::size_t valid, std::size_t dropped);

  mutable std::mutex mutex_;
  std::set<CUpti_ActivityKind> enabled_;
  std::set<CUpti_CallbackId> callbacks_;
  std::set<CUpti_CallbackId> driver_records_;
  std::set<CUpti_CallbackId> silenced_driver_;
  CUpti_BuffersCallbackRequestFunc requested_ = nullptr;
  CUpti_BuffersCallbackCompleteFunc completed_ = nullptr;
  CUpti_CallbackFunc api_callback_ = nullptr;
  void* api_userdata_ = nullptr;
  bool subscribed_ = false;
  std::size_t dropped_for_current_ = 0;
  std::deque<std::vector<std::uint8_t>> flush_queue_;
  std::vector<Held> held_;
  int flushes_ = 0;
  int subscriber_token_ = 0;
};

}  // namespace torchscope::cupti
