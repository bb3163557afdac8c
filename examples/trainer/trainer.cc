// corral-trainer: a toy training job with the real checkpoint contract.
//
//   corral-trainer --steps N [--step-ms MS] [--checkpoint-every K] [--metrics-every M]
//                  [--lr RATE]
//
// Each step draws 8 samples from a fixed-seed LCG, fits a 4-weight linear model to them
// by SGD in double precision, and folds the weights' bit patterns into a hash chain, so
// the final value depends on every step and on nothing but the step count and the learning
// rate. It prints `final=<16 hex digits>` when done. The learning rate is --lr, else a
// sweep trial's CORRAL_PARAM_LR (docs/jobspec.md#sweep), else 0.05.
//
// Checkpoints (rank 0 only; every rank computes the same state) go to
// CORRAL_CHECKPOINT_DIR/step-STEP-attempt-ATTEMPT every K steps and on SIGTERM,
// atomically (temp file, fsync, rename, fsync dir), each with a SHA-256 of its content
// so a torn file is never taken for a checkpoint. Each one is reported to
// CORRAL_AGENT_URL/local/checkpoint with CORRAL_WORKER_TOKEN when those are set.
// Rank 0 also reports the run's metrics to CORRAL_AGENT_URL/local/run ("loss" at every
// step, sent every M steps; "eval/weight_error" at the end) and, when done, writes the
// weights to CORRAL_CHECKPOINT_DIR/model and reports that file as the run's artifact.
// CORRAL_RESTORE_FROM names a checkpoint file (which must be valid) or a directory (the
// newest valid checkpoint in it is used; none: start from step 0).
//
// Exit codes: 0 done; 2 usage; 3 CORRAL_RESTORE_FROM is not a valid checkpoint;
// 4 a checkpoint could not be written; 143 stopped by SIGTERM after checkpointing
// (128 + SIGTERM, as a shell reports it: the job did not finish).
#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <httplib.h>
#include <optional>
#include <signal.h>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include <openssl/evp.h>
#include <sys/stat.h>

namespace {

volatile sig_atomic_t g_stop = 0;
void on_sigterm(int) { g_stop = 1; }

struct State {
  std::int64_t step = 0;
  std::uint64_t lcg = 0x2545F4914F6CDD1DULL;  // the fixed seed
  double w[4] = {0, 0, 0, 0};
  std::uint64_t chain = 14695981039346656037ULL;
};

std::uint64_t next_u64(State& s) {
  s.lcg = s.lcg * 6364136223846793005ULL + 1442695040888963407ULL;  // Knuth's MMIX LCG
  return s.lcg;
}
double next_unit(State& s) {  // in [-1, 1)
  return static_cast<double>(next_u64(s) >> 11) * 0x1.0p-53 * 2.0 - 1.0;
}
std::uint64_t bits(double d) {
  std::uint64_t u;
  std::memcpy(&u, &d, sizeof(u));
  return u;
}

const double kTrue[4] = {0.5, -1.25, 2.0, 0.75};

// One SGD step; returns the step's mean squared error before the update of each sample.
double train_step(State& s, double lr) {
  double squared = 0;
  for (int sample = 0; sample < 8; ++sample) {
    double x[4], y = 0, pred = 0;
    for (int j = 0; j < 4; ++j) {
      x[j] = next_unit(s);
      y += kTrue[j] * x[j];
      pred += s.w[j] * x[j];
    }
    y += 0.01 * next_unit(s);  // noise
    const double err = pred - y;
    squared += err * err;
    for (int j = 0; j < 4; ++j) s.w[j] -= lr * err * x[j];
  }
  ++s.step;
  for (double wj : s.w) {
    s.chain ^= bits(wj);
    s.chain *= 1099511628211ULL;
  }
  s.chain ^= static_cast<std::uint64_t>(s.step);
  s.chain *= 1099511628211ULL;
  return squared / 8;
}

// How far the weights are from the truth: the run's evaluation figure.
double weight_error(const State& s) {
  double sum = 0;
  for (int j = 0; j < 4; ++j) sum += (s.w[j] - kTrue[j]) * (s.w[j] - kTrue[j]);
  return std::sqrt(sum);
}

std::string sha256_hex(const std::string& data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), digest, &len, EVP_sha256(), nullptr);
  std::string out;
  char buf[3];
  for (unsigned int i = 0; i < len; ++i) {
    std::snprintf(buf, sizeof(buf), "%02x", digest[i]);
    out += buf;
  }
  return out;
}

std::string serialize(const State& s) {
  char body[512];
  std::snprintf(body, sizeof(body),
                "corral-trainer-checkpoint 1\nstep %" PRId64 "\nlcg %016" PRIx64 "\nw %016" PRIx64
                " %016" PRIx64 " %016" PRIx64 " %016" PRIx64 "\nchain %016" PRIx64 "\n",
                s.step, s.lcg, bits(s.w[0]), bits(s.w[1]), bits(s.w[2]), bits(s.w[3]), s.chain);
  const std::string text = body;
  return text + "sha256 " + sha256_hex(text) + "\n";
}

// The state in a checkpoint file, or nullopt when it is torn, truncated or foreign.
std::optional<State> load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  const std::size_t mark = text.rfind("sha256 ");
  if (mark == std::string::npos || text.size() < mark + 7 + 64 + 1) return std::nullopt;
  if (text.substr(mark + 7, 64) != sha256_hex(text.substr(0, mark))) return std::nullopt;
  State s;
  std::uint64_t w[4];
  if (std::sscanf(text.c_str(),
                  "corral-trainer-checkpoint 1\nstep %" SCNd64 "\nlcg %" SCNx64 "\nw %" SCNx64
                  " %" SCNx64 " %" SCNx64 " %" SCNx64 "\nchain %" SCNx64,
                  &s.step, &s.lcg, &w[0], &w[1], &w[2], &w[3], &s.chain) != 7) {
    return std::nullopt;
  }
  for (int j = 0; j < 4; ++j) std::memcpy(&s.w[j], &w[j], sizeof(double));
  return s;
}

bool write_atomic(const std::string& dir, const std::string& name, const std::string& data) {
  const std::string tmp = dir + "/.tmp-" + name + "-" + std::to_string(getpid());
  const std::string final_path = dir + "/" + name;
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  bool ok = write(fd, data.data(), data.size()) == static_cast<ssize_t>(data.size());
  ok = fsync(fd) == 0 && ok;
  ok = close(fd) == 0 && ok;
  ok = ok && rename(tmp.c_str(), final_path.c_str()) == 0;
  if (!ok) {
    unlink(tmp.c_str());
    return false;
  }
  const int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    fsync(dfd);
    close(dfd);
  }
  return true;
}

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

// The step and time of the last throughput measurement (start_measuring(), then each
// checkpoint report).
std::int64_t g_last_step = -1;
timespec g_last_time{};

void start_measuring(std::int64_t step) {
  g_last_step = step;
  clock_gettime(CLOCK_MONOTONIC, &g_last_time);
}

// Samples a second over the job since the previous report (or the start of training), as
// a data-parallel job counts them: 8 a step on each of WORLD_SIZE ranks. The scheduler
// learns the job's scaling curve from these (docs/scheduling.md, "7. Elastic jobs").
double throughput_since_last(std::int64_t step) {
  std::int64_t& last_step = g_last_step;
  timespec& last = g_last_time;
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  double rate = 0;
  if (last_step >= 0 && step > last_step) {
    const double seconds = static_cast<double>(now.tv_sec - last.tv_sec) +
                           static_cast<double>(now.tv_nsec - last.tv_nsec) / 1e9;
    const double world = std::max(1.0, std::atof(env_or("WORLD_SIZE", "1").c_str()));
    if (seconds > 0) rate = static_cast<double>(step - last_step) * 8.0 * world / seconds;
  }
  last_step = step;
  last = now;
  return rate;
}

// Posts `body` to the local agent's `path` (a few tries while it is unreachable); `what`
// names it in the log. Without CORRAL_AGENT_URL and CORRAL_WORKER_TOKEN: nothing to do.
void post_local(const char* path, const std::string& body, const char* what) {
  const std::string url = env_or("CORRAL_AGENT_URL", "");
  const std::string token = env_or("CORRAL_WORKER_TOKEN", "");
  if (url.empty() || token.empty()) return;
  httplib::Client client(url);
  client.set_connection_timeout(2, 0);
  client.set_read_timeout(5, 0);
  for (int attempt = 0; attempt < 3; ++attempt) {
    const auto res =
        client.Post(path, {{"Authorization", "Bearer " + token}}, body, "application/json");
    if (res && res->status / 100 == 2) return;
    if (res) {
      std::fprintf(stderr, "corral-trainer: %s refused: HTTP %d %s\n", what, res->status,
                   res->body.c_str());
      return;
    }
    usleep(100000 << attempt);
  }
  std::fprintf(stderr, "corral-trainer: local agent unreachable; %s not reported\n", what);
}

void report(const std::string& path, const State& s, std::size_t bytes, const std::string& sha) {
  const double throughput = throughput_since_last(s.step);
  char body[1024];
  std::snprintf(body, sizeof(body),
                R"({"step": %)" PRId64
                R"(, "path": "%s", "bytes": %zu, "checksum": "sha256:%s", "throughput": %.6g})",
                s.step, path.c_str(), bytes, sha.c_str(), throughput);
  post_local("/local/checkpoint", body, "checkpoint report");
}

// Metric points waiting to be reported: "loss" at every step, sent every --metrics-every
// steps and at the end (the agent takes at most 1,000 a report).
std::string g_points;
std::int64_t g_pending_points = 0;

void add_point(const char* name, std::int64_t step, double value) {
  char point[160];
  std::snprintf(point, sizeof(point), R"(%s{"name": "%s", "step": %)" PRId64 R"(, "value": %.17g})",
                g_points.empty() ? "" : ", ", name, step, value);
  g_points += point;
  ++g_pending_points;
}

void flush_points() {
  if (g_pending_points == 0) return;
  post_local("/local/run", R"({"metrics": [)" + g_points + "]}", "metrics report");
  g_points.clear();
  g_pending_points = 0;
}

// The trained weights as the run's output: CORRAL_CHECKPOINT_DIR/model (the same format
// as a checkpoint), reported as the run's artifact "model".
bool write_model(const State& s) {
  const std::string dir = env_or("CORRAL_CHECKPOINT_DIR", "");
  if (dir.empty()) return true;
  std::error_code ignored;  // write_atomic reports what matters
  std::filesystem::create_directories(dir, ignored);
  const std::string data = serialize(s);
  if (!write_atomic(dir, "model", data)) {
    std::fprintf(stderr, "corral-trainer: cannot write the model in %s: %s\n", dir.c_str(),
                 std::strerror(errno));
    return false;
  }
  post_local("/local/run",
             R"({"artifacts": [{"name": "model", "uri": ")" + dir +
                 R"(/model", "digest": "sha256:)" + sha256_hex(data) + R"(", "bytes": )" +
                 std::to_string(data.size()) + "}]}",
             "model report");
  return true;
}

bool checkpoint(const State& s) {
  const std::string dir = env_or("CORRAL_CHECKPOINT_DIR", "");
  if (dir.empty()) return true;  // nowhere to write: run without checkpoints
  std::error_code ignored;       // write_atomic reports what matters
  std::filesystem::create_directories(dir, ignored);
  char name[96];
  std::snprintf(name, sizeof(name), "step-%09" PRId64 "-attempt-%s", s.step,
                env_or("CORRAL_ATTEMPT", "0").c_str());
  const std::string data = serialize(s);
  if (!write_atomic(dir, name, data)) {
    std::fprintf(stderr, "corral-trainer: cannot write checkpoint in %s: %s\n", dir.c_str(),
                 std::strerror(errno));
    return false;
  }
  const std::string path = dir + "/" + name;
  std::fprintf(stderr, "corral-trainer: checkpoint step=%" PRId64 " path=%s\n", s.step,
               path.c_str());
  report(path, s, data.size(), sha256_hex(data));
  return true;
}

// CORRAL_RESTORE_FROM: a file must be a valid checkpoint; a directory yields its newest
// valid one (temp files and torn files are skipped).
int restore(State& s) {
  const std::string from = env_or("CORRAL_RESTORE_FROM", "");
  if (from.empty()) return 0;
  struct stat st {};
  if (stat(from.c_str(), &st) != 0) {
    std::fprintf(stderr, "corral-trainer: CORRAL_RESTORE_FROM %s: %s\n", from.c_str(),
                 std::strerror(errno));
    return 3;
  }
  std::string chosen;
  if (S_ISDIR(st.st_mode)) {
    DIR* d = opendir(from.c_str());
    std::vector<std::string> names;
    while (d) {
      const dirent* e = readdir(d);
      if (!e) break;
      if (std::strncmp(e->d_name, "step-", 5) == 0) names.emplace_back(e->d_name);
    }
    if (d) closedir(d);
    std::optional<State> best;
    for (const std::string& n : names) {
      auto loaded = load(from + "/" + n);
      if (loaded && (!best || loaded->step > best->step)) {
        best = loaded;
        chosen = from + "/" + n;
      }
    }
    if (!best) return 0;
    s = *best;
  } else {
    auto loaded = load(from);
    if (!loaded) {
      std::fprintf(stderr, "corral-trainer: %s is not a valid checkpoint (torn or foreign)\n",
                   from.c_str());
      return 3;
    }
    s = *loaded;
    chosen = from;
  }
  std::fprintf(stderr, "corral-trainer: resumed from %s at step %" PRId64 "\n", chosen.c_str(),
               s.step);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::int64_t steps = -1, step_ms = 0, every = 0, metrics_every = 10;
  double lr = 0.05;
  if (const char* swept = std::getenv("CORRAL_PARAM_LR")) lr = std::strtod(swept, nullptr);
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    char* end = nullptr;
    if (flag == "--lr") {
      lr = std::strtod(argv[i + 1], &end);
      if (*end != '\0' || !(lr > 0 && lr <= 1)) {
        std::fprintf(stderr, "corral-trainer: --lr: must be a number in (0, 1]\n");
        return 2;
      }
      continue;
    }
    const long long v = std::strtoll(argv[i + 1], &end, 10);
    if (*end != '\0' || v < 0) {
      std::fprintf(stderr, "corral-trainer: %s: must be a non-negative integer\n", flag.c_str());
      return 2;
    }
    if (flag == "--steps") {
      steps = v;
    } else if (flag == "--step-ms") {
      step_ms = v;
    } else if (flag == "--checkpoint-every") {
      every = v;
    } else if (flag == "--metrics-every") {
      metrics_every = std::clamp<std::int64_t>(v, 1, 1000);
    } else {
      std::fprintf(stderr, "corral-trainer: unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  if (steps < 0 || argc % 2 == 0) {
    std::fprintf(stderr,
                 "usage: corral-trainer --steps N [--step-ms MS] [--checkpoint-every K] "
                 "[--metrics-every M] [--lr RATE]\n");
    return 2;
  }
  if (!(lr > 0 && lr <= 1)) {
    std::fprintf(stderr, "corral-trainer: CORRAL_PARAM_LR: must be a number in (0, 1]\n");
    return 2;
  }
  struct sigaction sa {};
  sa.sa_handler = on_sigterm;  // no SA_RESTART: a sleeping step wakes up at once
  sigaction(SIGTERM, &sa, nullptr);

  // One line naming where this rank sits, so a job's logs show its launch environment.
  std::fprintf(stderr,
               "corral-trainer: job=%s attempt=%s rank=%s local_rank=%s node_rank=%s world=%s "
               "cuda=%s master=%s:%s\n",
               env_or("CORRAL_JOB_ID", "-").c_str(), env_or("CORRAL_ATTEMPT", "-").c_str(),
               env_or("RANK", "-").c_str(), env_or("LOCAL_RANK", "-").c_str(),
               env_or("NODE_RANK", "-").c_str(), env_or("WORLD_SIZE", "-").c_str(),
               env_or("CUDA_VISIBLE_DEVICES", "-").c_str(), env_or("MASTER_ADDR", "-").c_str(),
               env_or("MASTER_PORT", "-").c_str());
  const bool writer = env_or("RANK", "0") == "0";
  State s;
  if (const int rc = restore(s); rc != 0) return rc;
  start_measuring(s.step);
  while (s.step < steps) {
    if (g_stop) break;
    const double loss = train_step(s, lr);
    if (writer) {
      add_point("loss", s.step, loss);
      if (g_pending_points >= metrics_every) flush_points();
    }
    if (writer && every > 0 && s.step % every == 0 && s.step < steps && !checkpoint(s)) return 4;
    if (step_ms > 0) {
      timespec ts{static_cast<time_t>(step_ms / 1000), static_cast<long>(step_ms % 1000) * 1000000};
      nanosleep(&ts, nullptr);  // EINTR on SIGTERM: checked at the top of the loop
    }
  }
  if (writer) flush_points();
  if (s.step < steps) {  // asked to stop
    if (writer && !checkpoint(s)) return 4;
    std::fprintf(stderr, "corral-trainer: stopped at step %" PRId64 " (SIGTERM)\n", s.step);
    return 143;
  }
  if (writer) {
    add_point("eval/weight_error", s.step, weight_error(s));
    flush_points();
    if (!write_model(s)) return 4;
  }
  std::printf("final=%016" PRIx64 "\n", s.chain);
  std::fflush(stdout);
  return 0;
}
