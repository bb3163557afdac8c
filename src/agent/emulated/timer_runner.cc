#include "agent/emulated/timer_runner.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/splitmix.h"

namespace corral::agent {
namespace {

// A worker asked to stop checkpoints and exits this long after SIGTERM (corral-trainer
// takes a few ms; a real model's checkpoint longer, which its grace bounds).
constexpr std::int64_t kTimerStopMs = 50;
constexpr std::int64_t kTimerCheckpointBytes = std::int64_t{1} << 20;

std::optional<std::string> emulate_env(const core::WorkerSpec& spec, const char* name) {
  const auto it = spec.env.find(name);
  if (it == spec.env.end()) return std::nullopt;
  return it->second;
}

// A number >= 0 (seconds may be fractional); InvalidArgument names `field`.
core::Result<double> emulate_number(const std::string& text, const std::string& field) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(v) || v < 0) {
    return core::invalid_argument(field, "must be a number >= 0, got '" + text + "'");
  }
  return v;
}

bool runs_trainer(const core::WorkerSpec& spec) {
  if (spec.command.empty()) return false;
  const std::string& exe = spec.command.front();
  const std::string name = exe.substr(exe.rfind('/') == std::string::npos ? 0 : exe.rfind('/') + 1);
  return name == "corral-trainer";
}

// "sha256:" and 64 hex digits, a function of the worker and step (no bytes are written).
std::string emulated_digest(const core::WorkerKey& key, std::int64_t step) {
  std::uint64_t seed = core::splitmix64(static_cast<std::uint64_t>(key.job) * 1000003u +
                                        static_cast<std::uint64_t>(key.attempt) * 7919u +
                                        static_cast<std::uint64_t>(step));
  std::string out = "sha256:";
  char part[17];
  for (int i = 0; i < 4; ++i) {
    seed = core::splitmix64(seed);
    std::snprintf(part, sizeof(part), "%016llx", static_cast<unsigned long long>(seed));
    out += part;
  }
  return out;
}

}  // namespace

core::Result<EmulatedWork> emulated_work(const core::WorkerSpec& spec) {
  EmulatedWork work;
  const auto seconds = emulate_env(spec, "EMULATE_SECONDS");
  if (seconds) {
    CORRAL_ASSIGN_OR_RETURN(const double s, emulate_number(*seconds, "EMULATE_SECONDS"));
    work.steps = std::llround(std::ceil(s));
    work.step_ms = 1000;
    if (const auto every = emulate_env(spec, "EMULATE_CHECKPOINT_SECONDS")) {
      CORRAL_ASSIGN_OR_RETURN(const double e, emulate_number(*every, "EMULATE_CHECKPOINT_SECONDS"));
      work.checkpoint_every = std::llround(std::ceil(e));
    }
  } else if (runs_trainer(spec)) {
    work.step_ms = 100;  // corral-trainer's own default
    for (std::size_t i = 1; i + 1 < spec.command.size(); i += 2) {
      const std::string& flag = spec.command[i];
      std::int64_t* into = flag == "--steps"              ? &work.steps
                           : flag == "--step-ms"          ? &work.step_ms
                           : flag == "--checkpoint-every" ? &work.checkpoint_every
                                                          : nullptr;
      if (!into) continue;  // --lr, --metrics-every: nothing to emulate
      CORRAL_ASSIGN_OR_RETURN(const double v, emulate_number(spec.command[i + 1], flag));
      *into = std::llround(v);
    }
  }
  if (const auto xid = emulate_env(spec, "EMULATE_XID")) {
    CORRAL_ASSIGN_OR_RETURN(const double v, emulate_number(*xid, "EMULATE_XID"));
    work.xid = static_cast<std::int32_t>(v);
    work.exit_code = 1;
  }
  if (const auto code = emulate_env(spec, "EMULATE_EXIT_CODE")) {
    CORRAL_ASSIGN_OR_RETURN(const double v, emulate_number(*code, "EMULATE_EXIT_CODE"));
    if (v > 255) return core::invalid_argument("EMULATE_EXIT_CODE", "must be 0 to 255");
    work.exit_code = static_cast<std::int32_t>(v);
  }
  work.step_ms = std::max<std::int64_t>(work.step_ms, 1);
  return work;
}

std::int64_t restored_step(const std::string& restore_from) {
  const std::size_t slash = restore_from.rfind('/');
  const std::string name = restore_from.substr(slash == std::string::npos ? 0 : slash + 1);
  if (name.rfind("step-", 0) != 0) return 0;
  std::int64_t step = 0;
  for (std::size_t i = 5; i < name.size() && std::isdigit(static_cast<unsigned char>(name[i]));
       ++i) {
    step = step * 10 + (name[i] - '0');
  }
  return step;
}

std::int64_t TimerRunner::step_at(const Timer& t, std::int64_t ms) const {
  const std::int64_t done = (std::min(ms, t.end_ms) - t.record.started_at_ms) / t.work.step_ms;
  return std::min(t.work.steps, t.first_step + std::max<std::int64_t>(done, 0));
}

std::int64_t TimerRunner::checkpoint_ms(const Timer& t) const {
  return t.record.started_at_ms + (t.next_checkpoint - t.first_step) * t.work.step_ms;
}

core::CheckpointReport TimerRunner::checkpoint(const Timer& t, std::int64_t step) const {
  char name[64];
  std::snprintf(name, sizeof(name), "/step-%09lld-attempt-%d", static_cast<long long>(step),
                t.record.key.attempt);
  return core::CheckpointReport{.step = step,
                                .path = t.checkpoint_dir + name,
                                .bytes = kTimerCheckpointBytes,
                                .checksum = emulated_digest(t.record.key, step),
                                .throughput = 1000.0 / static_cast<double>(t.work.step_ms)};
}

core::Result<LaunchRecord> TimerRunner::start(const core::WorkerSpec& spec) {
  CORRAL_ASSIGN_OR_RETURN(const EmulatedWork work, emulated_work(spec));
  std::lock_guard lock(mu_);
  if (timers_.count(spec.key)) {
    return core::Status(core::StatusCode::kAlreadyExists, spec.key.name() + " already ran here");
  }
  const std::int64_t now_ms = core::to_ms(clock_.now());
  ++started_;
  Timer t{.record = {.key = spec.key,
                     .token = "emulated-" + std::to_string(started_),
                     .started_at_ms = now_ms,
                     .grace_ms = spec.grace_ms},
          .pid = 100000 + started_,
          .gpus = spec.gpus,
          .work = work,
          .first_step = std::clamp<std::int64_t>(restored_step(spec.restore_from), 0, work.steps),
          .exit_code = work.exit_code};
  t.end_ms = now_ms + (work.steps - t.first_step) * work.step_ms;
  if (spec.key.rank == 0 && work.checkpoint_every > 0 && !spec.checkpoint_dir.empty()) {
    t.checkpoint_dir = spec.checkpoint_dir;
    t.next_checkpoint = (t.first_step / work.checkpoint_every + 1) * work.checkpoint_every;
  }
  LaunchRecord record = t.record;
  timers_.emplace(spec.key, std::move(t));
  return record;
}

core::Status TimerRunner::stop(const core::WorkerKey& key, std::int64_t grace_ms) {
  std::lock_guard lock(mu_);
  const auto it = timers_.find(key);
  if (it == timers_.end()) return core::ok_status();
  Timer& t = it->second;
  const std::int64_t now_ms = core::to_ms(clock_.now());
  if (now_ms >= t.end_ms) return core::ok_status();  // already exited
  if (grace_ms <= 0) {
    t.end_ms = now_ms;  // SIGKILL: no checkpoint
    t.exit_code = 128 + 9;
    t.signal = 9;
    t.stopped = true;
    return core::ok_status();
  }
  if (t.stopped) return core::ok_status();
  t.stopped = true;
  t.end_ms = std::min(t.end_ms, now_ms + std::min(kTimerStopMs, grace_ms));
  t.exit_code = 128 + 15;  // caught SIGTERM, checkpointed, exited as corral-trainer does
  if (!t.checkpoint_dir.empty()) {
    // The periodic ones reached before the stop come first.
    while (t.next_checkpoint <= t.work.steps && checkpoint_ms(t) <= now_ms) {
      reported_.push_back({t.record.key, checkpoint(t, t.next_checkpoint)});
      t.next_checkpoint += t.work.checkpoint_every;
    }
    reported_.push_back({t.record.key, checkpoint(t, step_at(t, now_ms))});
    t.next_checkpoint = t.work.steps + 1;
  }
  return core::ok_status();
}

core::WorkerStatus TimerRunner::observe(const LaunchRecord& record) {
  std::lock_guard lock(mu_);
  const auto it = timers_.find(record.key);
  core::WorkerStatus s{.key = record.key, .started_at_ms = record.started_at_ms};
  if (it == timers_.end()) {  // never ran here: gone without an exit code
    s.state = core::WorkerStatus::State::kExited;
    s.exit_code = -1;
    s.exited_at_ms = core::to_ms(clock_.now());
    return s;
  }
  const Timer& t = it->second;
  s.pid = t.pid;
  if (core::to_ms(clock_.now()) < t.end_ms) {
    s.state = core::WorkerStatus::State::kRunning;
    return s;
  }
  s.state = core::WorkerStatus::State::kExited;
  s.exit_code = t.exit_code;
  s.signal = t.signal;
  s.exited_at_ms = t.end_ms;
  return s;
}

void TimerRunner::forget(const core::WorkerKey& key) {
  xids();  // an XID stays reported after its worker is forgotten
  std::lock_guard lock(mu_);
  timers_.erase(key);
}

std::vector<TimerRunner::Checkpoint> TimerRunner::take_checkpoints() {
  std::lock_guard lock(mu_);
  const std::int64_t now_ms = core::to_ms(clock_.now());
  std::vector<Checkpoint> out;
  for (auto& [key, t] : timers_) {
    if (t.checkpoint_dir.empty()) continue;
    while (t.next_checkpoint <= t.work.steps && checkpoint_ms(t) <= now_ms &&
           checkpoint_ms(t) <= t.end_ms) {
      out.push_back({key, checkpoint(t, t.next_checkpoint)});
      t.next_checkpoint += t.work.checkpoint_every;
    }
  }
  out.insert(out.end(), reported_.begin(), reported_.end());
  reported_.clear();
  return out;
}

std::map<std::int32_t, std::int32_t> TimerRunner::xids() {
  std::lock_guard lock(mu_);
  const std::int64_t now_ms = core::to_ms(clock_.now());
  for (const auto& [key, t] : timers_) {
    if (t.work.xid == 0 || t.stopped || now_ms < t.end_ms) continue;
    for (const std::int32_t gpu : t.gpus) xids_[gpu] = t.work.xid;
  }
  return xids_;
}

std::vector<std::int32_t> TimerRunner::busy_gpus() {
  std::lock_guard lock(mu_);
  const std::int64_t now_ms = core::to_ms(clock_.now());
  std::vector<std::int32_t> out;
  for (const auto& [key, t] : timers_) {
    if (now_ms < t.end_ms) out.insert(out.end(), t.gpus.begin(), t.gpus.end());
  }
  return out;
}

std::optional<std::int64_t> TimerRunner::next_event_ms() {
  std::lock_guard lock(mu_);
  const std::int64_t now_ms = core::to_ms(clock_.now());
  std::optional<std::int64_t> next;
  if (!reported_.empty()) next = now_ms;
  for (const auto& [key, t] : timers_) {
    if (now_ms < t.end_ms) next = std::min(next.value_or(t.end_ms), t.end_ms);
    // A checkpoint still to take (take_checkpoints() takes those due by now).
    if (!t.checkpoint_dir.empty() && t.next_checkpoint <= t.work.steps &&
        checkpoint_ms(t) <= t.end_ms) {
      next = std::min(next.value_or(checkpoint_ms(t)), checkpoint_ms(t));
    }
  }
  return next;
}

}  // namespace corral::agent
