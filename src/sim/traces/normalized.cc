#include "sim/traces/normalized.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "sim/traces/csv.h"

namespace corral::sim {
namespace {

constexpr std::array<std::string_view, 7> kColumns = {
    "job_id", "tenant", "submit_time_s", "gpus", "duration_s", "gpu_type", "status"};
constexpr std::string_view kDefaultTenant = "default";
// Bounds that keep every product in int64 milliseconds far from overflow.
constexpr double kMaxSeconds = 1e10;
constexpr std::int64_t kMaxGpus = 1 << 20;

// A number of seconds (fraction allowed) as milliseconds.
bool parse_seconds(std::string_view s, std::int64_t& ms) {
  double v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v) || v < 0 ||
      v > kMaxSeconds) {
    return false;
  }
  ms = std::llround(v * 1000);
  return true;
}

}  // namespace

core::Result<Workload> parse_normalized_csv(std::string_view text, std::string_view source) {
  Workload w{.source = std::string(source)};
  std::size_t line_no = 0;
  std::size_t pos = 0;
  bool header = true;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    const auto where = [&](std::string_view column) {
      return fmt::format("{}:{}: column {}", source, line_no, column);
    };
    const std::vector<std::string_view> cells = split_csv_line(line);
    if (header) {
      header = false;
      if (cells.size() != kColumns.size() ||
          !std::equal(cells.begin(), cells.end(), kColumns.begin())) {
        return core::invalid_argument(
            fmt::format("{}:{}", source, line_no),
            fmt::format("header must be '{}', got '{}'", fmt::join(kColumns, ","), line));
      }
      continue;
    }
    if (cells.size() != kColumns.size()) {
      return core::invalid_argument(
          fmt::format("{}:{}", source, line_no),
          fmt::format("expected {} columns, got {}", kColumns.size(), cells.size()));
    }
    TraceJob job;
    job.name = std::string(cells[0]);
    if (job.name.empty()) return core::invalid_argument(where("job_id"), "must not be empty");
    // Some traces (the Tiresias sample) have no tenants: their jobs share one.
    job.tenant =
        core::TenantId(cells[1].empty() ? std::string(kDefaultTenant) : std::string(cells[1]));
    if (!parse_seconds(cells[2], job.submit_ms)) {
      return core::invalid_argument(
          where("submit_time_s"),
          fmt::format("must be a number of seconds >= 0, got '{}'", cells[2]));
    }
    std::int64_t gpus = 0;
    const auto [ptr, ec] =
        std::from_chars(cells[3].data(), cells[3].data() + cells[3].size(), gpus);
    if (ec != std::errc() || ptr != cells[3].data() + cells[3].size() || gpus < 1 ||
        gpus > kMaxGpus) {
      return core::invalid_argument(where("gpus"),
                                    fmt::format("must be an integer >= 1, got '{}'", cells[3]));
    }
    job.gpus = static_cast<std::int32_t>(gpus);
    if (!parse_seconds(cells[4], job.duration_ms)) {
      return core::invalid_argument(
          where("duration_s"), fmt::format("must be a number of seconds >= 0, got '{}'", cells[4]));
    }
    // A zero-length job still occupies a scheduling cycle; give it one millisecond so
    // every job has a start and a distinct finish.
    job.duration_ms = std::max<std::int64_t>(job.duration_ms, 1);
    job.gpu_type = std::string(cells[5]);
    job.status = std::string(cells[6]);
    w.jobs.push_back(std::move(job));
  }
  if (header) return core::invalid_argument(fmt::format("{}:1", source), "empty file: no header");
  std::stable_sort(w.jobs.begin(), w.jobs.end(),
                   [](const TraceJob& a, const TraceJob& b) { return a.submit_ms < b.submit_ms; });
  return w;
}

core::Result<Workload> load_normalized_csv(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return core::not_found(fmt::format("cannot open workload file {}", path));
  std::stringstream text;
  text << in.rdbuf();
  return parse_normalized_csv(text.str(), path);
}

}  // namespace corral::sim
