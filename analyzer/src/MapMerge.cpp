// The map and merge steps (RankFacts.h), and analyze(): every store mapped side by side, the facts merged.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>
#include <tuple>

#include "FactsJson.h"
#include "Rules.h"
#include "torchscope/analyzer/RankFacts.h"
#include "torchscope/analyzer/Regions.h"
#include "torchscope/base/JsonText.h"
#include "torchscope/store/RunFolder.h"

namespace torchscope::analyzer {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// What the map step was told, which changes the facts: the merge takes facts mapped alike only.
json mappedOptions(const AnalyzeOptions& options) {
  return {{"user_code", options.user_code}, {"timeline_buckets", options.timeline_buckets}};
}

json factsHeader(const std::string& path) {
  return {
      {"format", kRankFactsFormat}, {"version", kRankFactsVersion}, {"torchscope", releaseVersion()}, {"store", path}};
}

// The document's header checked: the format, its version, the release that wrote it.
Result<void> checkHeader(const json& document, const std::string& name) {
  if (!document.is_object() || document.value("format", "") != kRankFactsFormat) {
    return makeError(ErrorCode::kNotTorchscope, name + ": not a torchscope rank facts document");
  }
  const auto version = document.value("version", std::int64_t{-1});
  if (version != kRankFactsVersion) {
    return makeError(ErrorCode::kVersion, fmt::format("{}: rank facts of format version {}; this torchscope reads "
                                                      "version {}: map the store again with this release",
                                                      name, version, kRankFactsVersion));
  }
  const auto release = document.value("torchscope", "");
  if (release != releaseVersion()) {
    return makeError(ErrorCode::kVersion,
                     fmt::format("{}: rank facts of torchscope {}; this is torchscope {}: map the store again with "
                                 "this release, or merge with `pip install torchscope=={}`",
                                 name, release, releaseVersion(), release));
  }
  return {};
}

std::vector<std::string> factsFilesIn(const std::string& folder, std::error_code& error) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(folder, error)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file(error) && name.size() > kRankFactsSuffix.size() && name.ends_with(kRankFactsSuffix)) {
      names.push_back(name);
    }
  }
  std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
    return std::make_tuple(store::rankInStoreName(a), a) < std::make_tuple(store::rankInStoreName(b), b);
  });
  for (auto& name : names) name = (fs::path(folder) / name).string();
  return names;
}

}  // namespace

std::string_view releaseVersion() { return TORCHSCOPE_RELEASE; }

Result<std::string> mapStore(const std::string& path, const AnalyzeOptions& options) {
  auto share = analyzeStoreShare(path, options);
  if (!share) return share.error();
  json document = factsHeader(path);
  document["options"] = mappedOptions(options);
  document.update(shareJson(*share));
  return base::dumpJson(document);
}

std::string unanalysedFacts(const std::string& path, const std::string& host, const std::string& reason) {
  json document = factsHeader(path);
  document["host"] = host;
  document["error"] = reason;
  return base::dumpJson(document);
}

Result<Analysis> mergeFacts(const std::vector<std::string>& documents, const std::vector<std::string>& names) {
  std::vector<StoreShare> shares;
  std::vector<UnanalysedStore> unanalysed;
  std::optional<json> options;
  std::string options_from;
  for (std::size_t i = 0; i < documents.size(); ++i) {
    const std::string name = i < names.size() ? names[i] : fmt::format("facts {}", i + 1);
    const json document = base::parseJson(documents[i]);
    if (document.is_discarded()) return makeError(ErrorCode::kCorrupt, name + ": damaged rank facts (not JSON)");
    if (auto checked = checkHeader(document, name); !checked) return checked.error();
    try {
      const std::string store = document.at("store").get<std::string>();
      if (const auto error = document.find("error"); error != document.end()) {
        unanalysed.push_back({store::rankInStoreName(fs::path(store).filename().string()), store,
                              document.value("host", ""), error->get<std::string>()});
        continue;
      }
      const json& mapped = document.at("options");
      if (!options) {
        options = mapped;
        options_from = name;
      } else if (mapped != *options) {
        return makeError(ErrorCode::kInvalidArgument,
                         fmt::format("{}: mapped with other options than {} ({} against {}): map every store alike",
                                     name, options_from, base::dumpJson(mapped), base::dumpJson(*options)));
      }
      shares.push_back(shareFromJson(document));
    } catch (const json::exception& e) {
      return makeError(ErrorCode::kCorrupt, fmt::format("{}: damaged rank facts ({})", name, e.what()));
    }
  }
  if (shares.empty()) {
    if (unanalysed.empty()) return makeError(ErrorCode::kInvalidArgument, "no rank facts to merge");
    return makeError(ErrorCode::kInvalidArgument,
                     fmt::format("none of the {} stores could be analysed; the first: {}: {}", unanalysed.size(),
                                 unanalysed.front().path, unanalysed.front().reason));
  }
  return mergeStoreShares(std::move(shares), std::move(unanalysed));
}

Result<Analysis> mergeFactsFiles(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const auto& path : paths) {
    std::error_code error;
    if (!fs::is_directory(path, error)) {
      files.push_back(path);
      continue;
    }
    auto in_folder = factsFilesIn(path, error);
    if (error) return makeError(ErrorCode::kIo, path + ": cannot list the folder (" + error.message() + ")");
    if (in_folder.empty()) {
      return makeError(ErrorCode::kNotFound,
                       fmt::format("{}: no rank facts (*{}) in this folder", path, kRankFactsSuffix));
    }
    files.insert(files.end(), in_folder.begin(), in_folder.end());
  }
  std::vector<std::string> documents;
  for (const auto& file : files) {
    std::ifstream in(file, std::ios::binary);
    if (!in) return makeError(ErrorCode::kNotFound, file + ": cannot read it");
    std::ostringstream text;
    text << in.rdbuf();
    documents.push_back(std::move(text).str());
  }
  return mergeFacts(documents, files);
}

namespace {

// The stores of a run folder are independent files: mapped side by side, one connection per thread.
std::vector<Result<std::string>> mapAll(const std::vector<std::string>& paths, const AnalyzeOptions& options) {
  std::vector<Result<std::string>> results(paths.size(), makeError(ErrorCode::kInvalidArgument, "not analysed"));
  const std::size_t workers = std::min<std::size_t>(paths.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i = next++; i < paths.size(); i = next++) results[i] = mapStore(paths[i], options);
  };
  std::vector<std::thread> threads;
  for (std::size_t t = 1; t < workers; ++t) threads.emplace_back(work);
  work();
  for (auto& thread : threads) thread.join();
  return results;
}

}  // namespace

Result<Analysis> analyze(const std::vector<std::string>& paths, const AnalyzeOptions& options) {
  if (paths.empty()) return makeError(ErrorCode::kInvalidArgument, "no store to analyse");
  std::vector<std::string> documents;
  for (auto& result : mapAll(paths, options)) {
    if (!result) return result.error();
    documents.push_back(std::move(*result));
  }
  auto combined = mergeFacts(documents, paths);
  if (!combined) return combined.error();
  if (!options.against.empty()) {
    if (paths.size() != 1)
      return makeError(ErrorCode::kInvalidArgument, "--against compares one store with one eager run");
    auto table = regionTable(paths.front(), options.against);
    if (!table) return table.error();
    if (auto finding = compilePaysFinding(*table, combined->runs.front().duration_s)) {
      combined->findings.push_back(*finding);
      rankFindingsByImpact(combined->findings);
    }
  }
  return combined;
}

}  // namespace torchscope::analyzer
