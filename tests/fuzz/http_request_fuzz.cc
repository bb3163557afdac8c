// libFuzzer target for corrald's HTTP request path: the input is the raw bytes a client
// sent on one keep-alive connection (up to kMaxRequests requests). They go through
// httplib's request parsing and routing into the real Api and AgentApi handlers
// (authentication, role checks, idempotency, audit, the lifecycle controllers) against
// a real SQLite store. No request may crash, trip a sanitizer or CORRAL_CHECK, let an
// exception escape a handler, or answer 500 (an internal error is corrald's fault, never
// the caller's).
//
// The world every input starts from is built once (LLVMFuzzerInitialize) through the
// same routes: tenants `default` and `nlp`, node n1 (8 H100) joined by its agent, job 1
// (tenant default, 2 GPUs) and job 2 (tenant nlp, 1 GPU) placed on n1 by one scheduling
// cycle, and four bearer tokens the dictionary knows (kAdminToken ...). Each input runs
// on a fresh copy of that database and fresh server objects, so an input that crashes
// crashes again on its own (no state leaks from one input into the next).
//
// What is left out, and why: the scheduler loop's thread (cycles would race the
// requests; the world's one cycle runs on this thread), NodeHealth's thread (it marks
// silent nodes lost on its own schedule; no request waits for it), cycle captures (off, so
// POST /v1/scheduler/captures answers at once instead of waiting 10 s for a cycle), and
// the long poll's wait (the AssignmentBoard is shut down, so waits return at once).
// GET /v1/jobs/{id}/logs calls the agent's URL: scripts/fuzz.sh runs this target in a
// network namespace of its own so a fuzzed agentUrl reaches nothing.
//
// httplib is Debian's shared library, not instrumented: libFuzzer's coverage and the
// sanitizers see corrald's code, not httplib's parser internals.
// Run: scripts/fuzz.sh SECONDS http_request
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <httplib.h>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unistd.h>
#include <utility>

#include "core/check.h"
#include "core/clock.h"
#include "server/agent_api/agent_api.h"
#include "server/api/api.h"
#include "server/base/crypto.h"
#include "server/base/metrics.h"
#include "server/base/model_json.h"
#include "server/base/spec_cache.h"
#include "server/config.h"
#include "server/controllers/assignment_board.h"
#include "server/cycle/scheduler.h"
#include "server/http/request_pipeline.h"
#include "server/http/token_auth.h"
#include "store/store.h"

namespace corral::fuzz {
namespace {

namespace fs = std::filesystem;

// The plaintext bearer tokens of the world (tests/fuzz/http_request.dict lists them).
constexpr const char* kAdminToken = "fuzz-admin";
constexpr const char* kMemberToken = "fuzz-member";  // tenant nlp
constexpr const char* kJoinToken = "fuzz-join";
constexpr const char* kAgentToken = "fuzz-agent-n1";  // node n1, epoch 1

// More requests than this in one input add length, not coverage.
constexpr int kMaxRequests = 8;
// The world's clock; each input starts a minute after the world was built.
constexpr std::int64_t kWorldBuiltMs = 1'700'000'000'000;

// One client connection: reads come from the fuzz input, writes are the response, kept
// so the harness can look at its status line.
class InputStream final : public httplib::Stream {
 public:
  explicit InputStream(std::string_view input) : input_(input) {}

  bool is_readable() const override { return true; }
  bool is_writable() const override { return true; }
  ssize_t read(char* ptr, std::size_t size) override {
    const std::size_t n = std::min(size, input_.size() - pos_);
    std::copy_n(input_.data() + pos_, n, ptr);
    pos_ += n;
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char* ptr, std::size_t size) override {
    written_.append(ptr, size);
    return static_cast<ssize_t>(size);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = "127.0.0.1";
    port = 40000;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    ip = "127.0.0.1";
    port = 8080;
  }
  // No socket behind this stream; httplib's server path only asks for it for TLS.
  socket_t socket() const override { return INVALID_SOCKET; }

  bool exhausted() const { return pos_ == input_.size(); }
  // What the server wrote since the last call.
  std::string take_written() { return std::exchange(written_, {}); }

 private:
  std::string_view input_;
  std::size_t pos_ = 0;
  std::string written_;
};

// httplib::Server with its per-connection request step opened to the harness.
class FuzzServer final : public httplib::Server {
 public:
  // Serves one request from `stream`; false once the connection is done (parse error,
  // Connection: close, or nothing left to read).
  bool serve_one(InputStream& stream) {
    bool closed = false;
    const bool ok =
        process_request(stream, /*close_connection=*/false, closed, [](httplib::Request&) {});
    return ok && !closed && !stream.exhausted();
  }
};

// The HTTP status of the final response in `written` ("HTTP/1.1 201 Created\r\n...",
// after a "100 Continue" when the client asked for one), or 0 when nothing was written.
int status_of(const std::string& written) {
  std::size_t at = 0;
  for (;;) {
    if (written.size() < at + 12 || written.compare(at, 7, "HTTP/1.") != 0) return 0;
    const int status = std::atoi(written.c_str() + at + 9);
    if (status != 100) return status;
    at = written.find("\r\n\r\n", at);
    if (at == std::string::npos) return 0;
    at += 4;
  }
}

// corrald's objects as run_corrald wires them (src/server/server.cc), on a store at
// `db`, minus the threads (see the file comment).
struct World {
  explicit World(const std::string& db, std::int64_t now_ms)
      : clock(core::time_from_ms(now_ms)), board(1), specs(server::SpecCache::kDefaultCapacity) {
    auto opened = store::open_sqlite_store(db);
    CORRAL_CHECK(opened.ok());
    store = std::move(*opened);
    config = server::default_server_config();
    loop = std::make_unique<server::Scheduler>(*store, clock, metrics, config.sched, config.shards,
                                               config.replica, &board, &specs);
    auth = std::make_unique<server::TokenAuth>(*store, clock);
    pipeline = std::make_unique<server::RequestPipeline>(*store, clock, metrics, *auth, board,
                                                         *loop, keys);
    agent_api = std::make_unique<server::AgentApi>(*pipeline, board, specs, config.agents);
    api = std::make_unique<server::Api>(*pipeline, *loop, metrics, board, specs, config.agents,
                                        config.billing);
    // Long polls answer at once (AssignmentBoard::wait returns after shutdown).
    board.shutdown();
    agent_api->install(http);
    api->install(http);
    // An exception that reaches httplib escaped a handler: a bug (STYLE.md 6.4). The Api's
    // own handler turns it into a 500; here it aborts with the exception's text.
    http.set_exception_handler(
        [](const httplib::Request& req, httplib::Response&, std::exception_ptr e) {
          std::string what = "unknown exception";
          try {
            std::rethrow_exception(e);
          } catch (const std::exception& x) {
            what = x.what();
          } catch (...) {
          }
          std::fprintf(stderr, "exception escaped %s %s: %s\n", req.method.c_str(),
                       req.path.c_str(), what.c_str());
          std::abort();
        });
  }

  // Sends one request built by the harness (world setup), returning the status.
  int send(const std::string& method, const std::string& path, const std::string& token,
           const std::string& body) {
    std::string raw = method + " " + path + " HTTP/1.1\r\nHost: corrald\r\n";
    if (!token.empty()) raw += "Authorization: Bearer " + token + "\r\n";
    raw += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
           "\r\n\r\n" + body;
    InputStream stream(raw);
    (void)http.serve_one(stream);
    return status_of(stream.take_written());
  }

  core::ManualClock clock;
  std::unique_ptr<store::Store> store;
  server::ServerConfig config;
  server::Metrics metrics;
  server::AssignmentBoard board;
  server::SpecCache specs;
  std::unique_ptr<server::Scheduler> loop;
  std::unique_ptr<server::TokenAuth> auth;
  const server::KeyRing keys = server::KeyRing::ephemeral();
  std::unique_ptr<server::RequestPipeline> pipeline;
  std::unique_ptr<server::AgentApi> agent_api;
  std::unique_ptr<server::Api> api;
  FuzzServer http;
};

void insert_tokens(store::Store& store, core::Time now) {
  const core::Status s = store.transact([&](store::Tx& tx) {
    for (const auto& t : server::default_server_config().tenants) {
      CORRAL_RETURN_IF_ERROR(tx.tenants().put_tenant(
          {.id = t.tenant.id, .config_json = server::tenant_config_to_json(t), .updated_at = now}));
    }
    const auto token = [&](const char* plain, const char* role, const char* tenant,
                           const char* node) {
      return tx.security().insert_token({.hash = server::sha256_hex(plain),
                                         .role = role,
                                         .tenant = tenant,
                                         .node = node,
                                         .created_at = now});
    };
    CORRAL_RETURN_IF_ERROR(token(kAdminToken, "admin", "", ""));
    CORRAL_RETURN_IF_ERROR(token(kMemberToken, "member", "nlp", ""));
    return token(kJoinToken, "join", "", "");
  });
  CORRAL_CHECK(s.ok());
}

std::string join_body() {
  std::string gpus;
  for (int i = 0; i < 8; ++i) {
    if (i > 0) gpus += ",";
    gpus += R"({"index":)" + std::to_string(i) + R"(,"uuid":"GPU-n1-)" + std::to_string(i) +
            R"(","type":"H100","nvlinkDomain":0})";
  }
  return R"({"agentUrl":"http://127.0.0.1:1","inventory":{"source":"simulated:fuzz"},)"
         R"("node":{"id":"n1","labels":{"rack":"r1","leaf":"l1","spine":"s1"},"gpus":[)" +
         gpus + "]}}";
}

// Builds the world every input starts from in `db` (see the file comment).
void build_world(const std::string& db) {
  World w(db, kWorldBuiltMs);
  insert_tokens(*w.store, w.clock.now());
  CORRAL_CHECK(w.send("POST", "/v1/agents/join", kJoinToken, join_body()) == 200);
  const core::Status agent = w.store->transact([&](store::Tx& tx) {
    return tx.security().insert_token({.hash = server::sha256_hex(kAgentToken),
                                       .role = "agent",
                                       .node = "n1",
                                       .created_at = w.clock.now()});
  });
  CORRAL_CHECK(agent.ok());
  const int tenant = w.send("PUT", "/v1/tenants/nlp", kAdminToken, "{}");
  CORRAL_CHECK(tenant == 200 || tenant == 201);
  CORRAL_CHECK(w.send("POST", "/v1/jobs", kAdminToken,
                      R"({"name":"train","tenant":"default","resources":{"gpus":2,)"
                      R"("gpuTypes":["H100"]},"command":["python","train.py"],)"
                      R"("secretEnv":{"WANDB_API_KEY":"hunter2"}})") == 201);
  CORRAL_CHECK(w.send("POST", "/v1/jobs", kMemberToken,
                      R"({"name":"eval","tenant":"nlp","resources":{"gpus":1},)"
                      R"("command":["true"],"checkpoint":{"dir":"/ckpt","intervalSeconds":60}})") ==
               201);
  // The lease, then one cycle on this thread: both jobs are placed on n1.
  CORRAL_CHECK(w.loop->start().ok());
  w.loop->stop();
  CORRAL_CHECK(w.loop->run_cycle().ok());
}

struct Paths {
  fs::path dir;
  fs::path base;
  fs::path work;
};

Paths* g_paths = nullptr;
// CORRAL_HTTP_FUZZ_TRACE=1: print each response's status line (to see how deep the seeds
// and a corpus reach: a 401 or 404 everywhere means the world is not what they expect).
bool g_trace = false;

void remove_db(const fs::path& db) {
  std::error_code ec;
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db.string() + suffix, ec);
}

void remove_dir() {
  std::error_code ec;
  if (g_paths != nullptr) fs::remove_all(g_paths->dir, ec);
}

}  // namespace
}  // namespace corral::fuzz

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  using namespace corral::fuzz;
  // tmpfs when there is one: every commit fsyncs (synchronous=FULL).
  const fs::path root = fs::exists("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
  std::string templ = (root / "corral-http-fuzz-XXXXXX").string();
  CORRAL_CHECK(::mkdtemp(templ.data()) != nullptr);
  g_paths = new Paths{
      .dir = templ, .base = fs::path(templ) / "base.db", .work = fs::path(templ) / "work.db"};
  std::atexit(remove_dir);
  g_trace = std::getenv("CORRAL_HTTP_FUZZ_TRACE") != nullptr;
  build_world(g_paths->base.string());  // closed again: base.db is complete without a WAL
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace corral::fuzz;
  remove_db(g_paths->work);
  // libFuzzer's timer signal (SIGALRM, for -timeout) can interrupt the copy: try again.
  std::error_code copied;
  for (int attempt = 0; attempt < 100; ++attempt) {
    copied.clear();
    if (fs::copy_file(g_paths->base, g_paths->work, fs::copy_options::overwrite_existing, copied)) {
      break;
    }
  }
  CORRAL_CHECK(!copied);
  World w(g_paths->work.string(), kWorldBuiltMs + 60'000);
  InputStream stream(std::string_view(reinterpret_cast<const char*>(data), size));
  for (int i = 0; i < kMaxRequests; ++i) {
    const bool more = w.http.serve_one(stream);
    const std::string answer = stream.take_written();
    if (g_trace) {
      std::fprintf(stderr, "request %d: %s\n", i, answer.substr(0, answer.find('\r')).c_str());
    }
    if (status_of(answer) == 500) {
      std::fprintf(stderr, "request %d answered 500:\n%s\n", i, answer.c_str());
      std::abort();
    }
    if (!more) break;
    w.clock.advance(corral::core::seconds(1));
  }
  return 0;
}
