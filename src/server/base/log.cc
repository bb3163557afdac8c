#include "server/base/log.h"

#include <chrono>
#include <cstdio>
#include <ctime>

#include <fmt/format.h>

#include "core/check.h"
#include "server/base/http_status.h"

namespace corral::server {
namespace {

bool is_key(const std::string& key) {
  if (key.empty() || key == "ts" || key == "level" || key == "event") return false;
  for (const char c : key) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))) {
      return false;
    }
  }
  return key[0] >= 'a' && key[0] <= 'z';
}

// A text value that needs no quotes: printable ASCII without space, quotes, '=' or '\'.
bool bare(std::string_view s) {
  if (s.empty()) return false;
  for (const char c : s) {
    if (c <= 0x20 || c >= 0x7f || c == '"' || c == '\'' || c == '=' || c == '\\') return false;
  }
  return true;
}

void append_value(std::string& out, const LogValue& v, LogFormat format) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) {
    out += std::to_string(*i);
  } else if (const auto* b = std::get_if<bool>(&v)) {
    out += *b ? "true" : "false";
  } else {
    const std::string& s = std::get<std::string>(v);
    out += format == LogFormat::kText && bare(s) ? s : log_text(s);
  }
}

}  // namespace

std::string_view to_string(LogLevel level) {
  switch (level) {
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kError:
      return "error";
  }
  return "?";
}

std::string_view to_string(LogFormat format) {
  return format == LogFormat::kJson ? "json" : "text";
}

core::Result<LogFormat> parse_log_format(std::string_view text, const std::string& field) {
  if (text == "text") return LogFormat::kText;
  if (text == "json") return LogFormat::kJson;
  return core::invalid_argument(field, "must be text or json, got " + log_text(text));
}

LogEvent& LogEvent::add(std::string key, std::string value) {
  CORRAL_CHECK(is_key(key));
  fields.emplace_back(std::move(key), std::move(value));
  return *this;
}

LogEvent& LogEvent::add(std::string key, std::int64_t value) {
  CORRAL_CHECK(is_key(key));
  fields.emplace_back(std::move(key), value);
  return *this;
}

LogEvent& LogEvent::add(std::string key, bool value) {
  CORRAL_CHECK(is_key(key));
  fields.emplace_back(std::move(key), value);
  return *this;
}

std::string format_log_time(std::int64_t at_ms) {
  const std::int64_t ms = ((at_ms % 1000) + 1000) % 1000;
  const std::time_t secs = static_cast<std::time_t>((at_ms - ms) / 1000);
  std::tm utc{};
  gmtime_r(&secs, &utc);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", utc.tm_year + 1900,
                     utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, ms);
}

std::string format_log_line(const LogEvent& e, LogFormat format, std::int64_t at_ms) {
  std::string out;
  const std::string ts = format_log_time(at_ms);
  if (format == LogFormat::kJson) {
    out = fmt::format(R"({{"ts":"{}","level":"{}","event":{})", ts, to_string(e.level),
                      log_text(e.event));
    for (const auto& [key, value] : e.fields) {
      out += ",\"" + key + "\":";
      append_value(out, value, format);
    }
    out += "}";
    return out;
  }
  out = fmt::format("{} {} {}", ts, to_string(e.level), e.event);
  for (const auto& [key, value] : e.fields) {
    out += " " + key + "=";
    append_value(out, value, format);
  }
  return out;
}

void Logger::set_format(LogFormat format) {
  std::lock_guard lock(mu_);
  format_ = format;
}

LogFormat Logger::format() const {
  std::lock_guard lock(mu_);
  return format_;
}

void Logger::write(const LogEvent& e) {
  const std::int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                  std::chrono::system_clock::now().time_since_epoch())
                                  .count();
  std::lock_guard lock(mu_);
  const std::string line = format_log_line(e, format_, now_ms) + "\n";
  if (sink_) {
    sink_(line);
  } else {
    std::fwrite(line.data(), 1, line.size(), stderr);
  }
}

void Logger::write_all(const std::vector<LogEvent>& events) {
  for (const LogEvent& e : events) write(e);
}

Logger& process_log() {
  static Logger* const log = new Logger();  // never destroyed: threads may log at exit
  return *log;
}

}  // namespace corral::server
