#include "server/cycle/cycle_recorder.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include <fmt/format.h>

namespace corral::server {
namespace {

namespace fs = std::filesystem;

bool is_capture_name(const std::string& name) {
  if (!name.starts_with("cycle-") || !name.ends_with(".json")) return false;
  return std::all_of(name.begin() + 6, name.end() - 5,
                     [](char c) { return (c >= '0' && c <= '9') || c == '-'; });
}

}  // namespace

CycleRecorder::CycleRecorder(CaptureOptions options) : options_(std::move(options)) {
  if (!enabled()) return;
  std::error_code ec;
  fs::create_directories(options_.dir, ec);
  fs::permissions(options_.dir, fs::perms::owner_all, ec);
}

bool CycleRecorder::wants(std::int64_t n) {
  if (!enabled()) return false;
  std::lock_guard lock(mu_);
  return asked_ || (options_.every > 0 && n % options_.every == 0);
}

core::Result<std::string> CycleRecorder::record(const cycle::CapturedCycle& c, std::int64_t epoch,
                                                std::int64_t n) {
  if (!enabled()) return core::failed_precondition("cycle captures are off");
  const std::string name = fmt::format("cycle-{:06}-{:012}.json", epoch, n);
  const fs::path path = fs::path(options_.dir) / name;
  const fs::path tmp = fs::path(options_.dir) / (name + ".tmp");
  const std::string text = cycle::to_json(c);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text << '\n';
    out.close();
    if (!out) return core::Status(core::StatusCode::kUnavailable, "cannot write " + tmp.string());
  }
  std::error_code ec;
  fs::permissions(tmp, fs::perms::owner_read | fs::perms::owner_write, ec);
  fs::rename(tmp, path, ec);
  if (ec) return core::Status(core::StatusCode::kUnavailable, "cannot rename " + tmp.string());
  {
    std::lock_guard lock(mu_);
    asked_ = false;
    ++written_;
    last_ = {.name = name, .bytes = static_cast<std::int64_t>(text.size()) + 1};
    trim();
  }
  cv_.notify_all();
  return name;
}

core::Result<CaptureFile> CycleRecorder::capture_next(std::chrono::milliseconds wait) {
  if (!enabled()) return core::failed_precondition("cycle captures are off");
  std::unique_lock lock(mu_);
  const std::int64_t before = written_;
  asked_ = true;
  if (!cv_.wait_for(lock, wait, [&] { return written_ > before; })) {
    return core::Status(core::StatusCode::kUnavailable,
                        "no scheduling cycle ran within " + std::to_string(wait.count()) + " ms");
  }
  return last_;
}

std::vector<CaptureFile> CycleRecorder::list() const {
  std::vector<CaptureFile> out;
  if (!enabled()) return out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(options_.dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (!is_capture_name(name)) continue;
    out.push_back({.name = name, .bytes = static_cast<std::int64_t>(entry.file_size(ec))});
  }
  std::sort(out.begin(), out.end(),
            [](const CaptureFile& a, const CaptureFile& b) { return a.name < b.name; });
  return out;
}

core::Result<std::string> CycleRecorder::read(const std::string& name) const {
  if (!enabled() || !is_capture_name(name)) return core::not_found("no such capture");
  std::ifstream in(fs::path(options_.dir) / name, std::ios::binary);
  if (!in) return core::not_found("no such capture");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void CycleRecorder::trim() {
  std::vector<CaptureFile> files = list();
  std::int64_t total = 0;
  for (const auto& f : files) total += f.bytes;
  std::error_code ec;
  // Oldest first; the one just written stays even when it alone passes the bound.
  for (std::size_t i = 0; i + 1 < files.size() && total > options_.max_bytes; ++i) {
    fs::remove(fs::path(options_.dir) / files[i].name, ec);
    total -= files[i].bytes;
  }
}

}  // namespace corral::server
