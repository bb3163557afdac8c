// Checked decoding of stored values (internal/sql_rows.h).
#include "store/internal/sql_rows.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <limits>
#include <string>
#include <system_error>

#include "core/decode_memo.h"

namespace corral::store::detail {

std::vector<IdChunk> id_chunks(const std::vector<core::JobId>& ids) {
  std::vector<std::int64_t> sorted;
  sorted.reserve(ids.size());
  for (const core::JobId id : ids) sorted.push_back(id.value);
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  constexpr std::size_t kIdsPerQuery = 500;
  std::vector<IdChunk> out;
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    if (i % kIdsPerQuery == 0) out.push_back({.list = "("});
    IdChunk& chunk = out.back();
    chunk.params.emplace_back(sorted[i]);
    chunk.list += (chunk.params.size() == 1 ? "$" : ", $") + std::to_string(chunk.params.size());
    if (chunk.params.size() == kIdsPerQuery || i + 1 == sorted.size()) chunk.list += ")";
  }
  return out;
}

std::string double_text(double v) {
  char text[64];
  std::snprintf(text, sizeof text, "%.17g", v);
  return text;
}

IdChunk name_list(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  IdChunk out{.list = "("};
  for (auto& n : names) {
    out.params.emplace_back(std::move(n));
    out.list += (out.params.size() == 1 ? "$" : ", $") + std::to_string(out.params.size());
  }
  out.list += ")";
  return out;
}

IdChunk tenant_list(const std::vector<core::TenantId>& tenants) {
  std::vector<std::string> names;
  names.reserve(tenants.size());
  for (const auto& t : tenants) names.push_back(t.value);
  return name_list(std::move(names));
}

std::string_view column_name(std::string_view columns, std::size_t col) {
  for (std::size_t i = 0; i < col; ++i) {
    const std::size_t comma = columns.find(',');
    if (comma == std::string_view::npos) return "?";
    columns.remove_prefix(comma + 1);
  }
  columns = columns.substr(0, columns.find(','));
  while (!columns.empty() && columns.front() == ' ') columns.remove_prefix(1);
  while (!columns.empty() && columns.back() == ' ') columns.remove_suffix(1);
  return columns;
}

void RowReader::fail(std::size_t col, std::string_view why) {
  if (!status_.ok()) return;
  std::string message(table_);
  message += '.';
  message += column_name(columns_, col);
  message += ": ";
  message += why;
  if (col < row_.size() && row_[col]) {
    message += " \"";
    message += *row_[col];
    message += '"';
  } else if (col < row_.size()) {
    message += " NULL";
  }
  status_ = core::Status(core::StatusCode::kDataLoss, std::move(message));
}

std::string RowReader::str(std::size_t col) const {
  return col < row_.size() ? row_[col].value_or("") : "";
}

std::int64_t RowReader::i64(std::size_t col) {
  if (col >= row_.size()) {
    fail(col, "missing from the row");
    return 0;
  }
  if (!row_[col]) return 0;
  const std::string& text = *row_[col];
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
    fail(col, "stored value is not a 64-bit integer:");
    return 0;
  }
  return value;
}

std::int32_t RowReader::i32(std::size_t col) {
  const std::int64_t value = i64(col);
  if (value < std::numeric_limits<std::int32_t>::min() ||
      value > std::numeric_limits<std::int32_t>::max()) {
    fail(col, "stored value is out of the 32-bit range:");
    return 0;
  }
  return static_cast<std::int32_t>(value);
}

bool RowReader::flag(std::size_t col) {
  const std::int64_t value = i64(col);
  if (value != 0 && value != 1) {
    fail(col, "stored value is not 0 or 1:");
    return false;
  }
  return value == 1;
}

std::optional<core::Time> RowReader::optional_time(std::size_t col) {
  if (col < row_.size() && !row_[col]) return std::nullopt;
  return time(col);
}

double RowReader::f64(std::size_t col) {
  if (col >= row_.size()) {
    fail(col, "missing from the row");
    return 0;
  }
  if (!row_[col]) return 0;
  const std::string& text = *row_[col];
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
    fail(col, "stored value is not a number:");
    return 0;
  }
  return value;
}

core::JobPhase RowReader::job_phase(std::size_t col) {
  if (auto phase = core::job_phase_from_string(str(col))) return *phase;
  fail(col, "unknown stored job phase");
  return core::JobPhase::kPending;
}

template <typename Enum>
Enum RowReader::one_of(std::size_t col, std::initializer_list<Enum> values, std::string_view why) {
  const std::string value = str(col);
  for (const Enum e : values) {
    if (value == to_string(e)) return e;
  }
  fail(col, why);
  return *values.begin();  // unused: the row's status is the error
}

template <typename T>
T RowReader::decoded(std::size_t col, core::Result<T> result, std::string_view why) {
  if (result.ok()) return std::move(*result);
  fail(col, std::string(why) + " (" + result.status().to_string() + "):");
  return T{};
}

core::NodeAdminState RowReader::admin_state(std::size_t col) {
  return one_of(col,
                {core::NodeAdminState::kActive, core::NodeAdminState::kCordoned,
                 core::NodeAdminState::kDraining},
                "unknown stored admin state");
}

core::GpuCondition RowReader::gpu_condition(std::size_t col) {
  return one_of(col,
                {core::GpuCondition::kOk, core::GpuCondition::kHot, core::GpuCondition::kUnhealthy},
                "unknown stored GPU condition");
}

core::WorkerStatus::State RowReader::worker_state(std::size_t col) {
  return one_of(col, {core::WorkerStatus::State::kRunning, core::WorkerStatus::State::kExited},
                "unknown stored worker state");
}

core::ObservedInventory RowReader::observed_inventory(std::size_t col) {
  // Written at join and read by every cycle: each distinct text is parsed once.
  static core::DecodeMemo<core::ObservedInventory> memo(1 << 15);
  return decoded(col, memo.get(str(col), core::decode_observed_inventory),
                 "stored inventory does not decode");
}

std::vector<core::GpuHealth> RowReader::gpu_readings(std::size_t col) {
  return decoded(col, core::decode_gpu_health(str(col)), "stored GPU readings do not decode");
}

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  for (std::size_t start = 0; start < text.size();) {
    const auto comma = text.find(',', start);
    const auto end = comma == std::string::npos ? text.size() : comma;
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace corral::store::detail
