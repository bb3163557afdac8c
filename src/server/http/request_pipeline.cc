#include "server/http/request_pipeline.h"

#include <cstdio>
#include <functional>
#include <httplib.h>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "server/base/crypto.h"
#include "server/base/http_status.h"
#include "server/controllers/audit.h"

namespace corral::server {

using core::Result;
using core::Status;
using core::StatusCode;

namespace {

// An Idempotency-Key is stored and compared as bytes: printable ASCII only (an sf-string,
// as the IETF draft has it), so every store holds it as sent and no answer quotes a byte
// that is not UTF-8.
Status check_idempotency_key(const std::string& key) {
  if (key.size() > 255) {
    return core::invalid_argument("Idempotency-Key", "must be at most 255 characters");
  }
  for (const char c : key) {
    if (c < 0x20 || c > 0x7e) {
      return core::invalid_argument("Idempotency-Key", "must be printable ASCII");
    }
  }
  return Status();
}

// A body's media type, lowercase, without parameters (charset).
std::string media_type(const httplib::Request& req) {
  std::string type = req.get_header_value("Content-Type");
  type = type.substr(0, type.find(';'));
  while (!type.empty() && (type.back() == ' ' || type.back() == '\t')) type.pop_back();
  for (char& c : type) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  return type;
}

bool is_yaml(const std::string& type) {
  return type == "application/yaml" || type == "application/x-yaml" || type == "text/yaml";
}

// A body's media type: JSON, or YAML where the route takes it. No Content-Type is JSON;
// parameters (charset) are ignored, and the type's case too.
Status check_body_type(const Route& route, const httplib::Request& req) {
  if (req.body.empty()) return Status();
  const std::string type = media_type(req);
  if (type.empty() || type == "application/json") return Status();
  if (route.takes_yaml && is_yaml(type)) return Status();
  return core::invalid_argument(
      "Content-Type", std::string(route.takes_yaml ? "must be application/json or application/yaml"
                                                   : "must be application/json") +
                          ", got \"" + type + "\"");
}

// The route's roles and node scope, checked against the authenticated caller.
Status admit(const Route& route, const Principal& p, const httplib::Request& req) {
  if (!route.roles.has(p.role)) {
    if (p.role == Role::kJoin)
      return permission_denied("a join token may only call POST /v1/agents/join");
    return permission_denied("role " + std::string(to_string(p.role)) + " may not do this");
  }
  if (route.node_scoped && p.role == Role::kAgent && p.node != req.matches[1].str()) {
    return permission_denied("an agent of node " + p.node + " may not act for node " +
                             req.matches[1].str());
  }
  return Status();
}

// The action lines of the kCall route this thread serves, so that change() can drop
// those of a transaction attempt that is retried. (The transaction itself may run on
// another thread, the group commit's leader: the list is reached through the Call.)
thread_local std::vector<LogEvent>* t_serving_actions = nullptr;

}  // namespace

Reply json_reply(const nlohmann::json& body, int status) {
  Reply r;
  r.status = status;
  r.body = json_text(body);
  return r;
}

std::string Call::path_param(int i) const { return req.matches[static_cast<std::size_t>(i)]; }

std::optional<std::string> Call::query(const char* name) const {
  if (!req.has_param(name)) return std::nullopt;
  return req.get_param_value(name);
}

std::string Call::header(const char* name) const { return req.get_header_value(name); }

const std::string& Call::body() const { return req.body; }

Result<PageRequest> Call::page() const {
  return read_page_request(query("limit"), query("cursor"));
}

// "token:ci-bot(member:nlp, owner alice@example.com)": the token's name, what it may do
// and whom it was made for.
std::string Call::actor() const {
  return who.id + "(" + std::string(to_string(who.role)) + (who.tenant.empty() ? "" : ":") +
         who.tenant + (who.owner.empty() ? "" : ", owner " + who.owner) + ")";
}

bool yaml_body(const httplib::Request& req) { return is_yaml(media_type(req)); }

Route read_route(const char* method, std::string pattern, RoleSet roles, Route::InTx fn) {
  return Route{method, std::move(pattern), Route::Kind::kRead, roles, std::move(fn), nullptr};
}

Route write_route(const char* method, std::string pattern, RoleSet roles, Route::InTx fn,
                  Route::Precheck precheck) {
  return Route{method,  std::move(pattern), Route::Kind::kWrite, roles, std::move(fn),
               nullptr, std::move(precheck)};
}

Route call_route(const char* method, std::string pattern, RoleSet roles, Route::Direct fn) {
  return Route{method, std::move(pattern), Route::Kind::kCall, roles, nullptr, std::move(fn)};
}

Route node_route(const char* method, std::string pattern, RoleSet roles, Route::Direct fn) {
  Route r = call_route(method, std::move(pattern), roles, std::move(fn));
  r.node_scoped = true;
  return r;
}

Route public_route(const char* method, std::string pattern, Route::Direct fn) {
  Route r = call_route(method, std::move(pattern), {}, std::move(fn));
  r.kind = Route::Kind::kPublic;
  return r;
}

RequestPipeline::RequestPipeline(store::Store& store, const core::Clock& clock, Metrics& metrics,
                                 TokenAuth& auth, AssignmentBoard& board, SchedulerSignals& loop,
                                 const KeyRing& keys)
    : store_(store),
      clock_(clock),
      metrics_(metrics),
      auth_(auth),
      board_(board),
      loop_(loop),
      keys_(keys),
      request_prefix_(new_token().substr(4, 8)) {}

std::string RequestPipeline::new_request_id() {
  return request_prefix_ + "-" + std::to_string(++next_request_);
}

void RequestPipeline::install(httplib::Server& http, const std::vector<Route>& routes) {
  for (const Route& route : routes) {
    installed_.emplace_back(route.method, route.pattern);
    // The handler owns its route: the table may be a temporary.
    auto handler = [this, route](const httplib::Request& req, httplib::Response& res) {
      serve(route, req, res);
    };
    const std::string m = route.method;
    if (m == "GET") {
      http.Get(route.pattern, handler);
    } else if (m == "POST") {
      http.Post(route.pattern, handler);
    } else if (m == "PUT") {
      http.Put(route.pattern, handler);
    } else if (m == "DELETE") {
      http.Delete(route.pattern, handler);
    } else {
      std::fprintf(stderr, "corrald: route %s %s has no such method\n", route.method,
                   route.pattern.c_str());
      std::abort();  // a programming error in a route table
    }
  }
}

void RequestPipeline::serve(const Route& route, const httplib::Request& req,
                            httplib::Response& res) {
  const std::string rid = new_request_id();
  Principal anonymous;
  Result<Principal> p = anonymous;
  if (route.kind != Route::Kind::kPublic) {
    p = auth_.authenticate(req.get_header_value("Authorization"));
    if (!p.ok()) return fail(res, rid, p.status());
    if (const Status s = admit(route, *p, req); !s.ok()) return fail(res, rid, s);
  }
  if (const Status s = check_body_type(route, req); !s.ok()) return fail(res, rid, s);
  std::vector<LogEvent> actions;
  const Call call{req, *p, rid, &actions};
  if (route.precheck) {
    if (const Status s = route.precheck(call); !s.ok()) return fail(res, rid, s);
  }
  Result<Reply> reply = Reply();
  bool replayed = false;
  switch (route.kind) {
    case Route::Kind::kRead: {
      const Status s = store_.read([&](store::Tx& tx) {
        reply = route.in_tx(call, tx);
        return reply.status();
      });
      if (!s.ok()) reply = s;
      break;
    }
    case Route::Kind::kWrite:
      reply = run_write(route, call, replayed);
      break;
    case Route::Kind::kCall:
    case Route::Kind::kPublic:
      t_serving_actions = &actions;
      reply = route.direct(call);
      t_serving_actions = nullptr;
      break;
  }
  if (!reply.ok()) return fail(res, rid, reply.status());
  process_log().write_all(actions);  // every transaction of the call committed
  if (replayed) {
    ++metrics_.idempotent_replays;
    res.set_header("Idempotent-Replayed", "true");
  } else if (route.kind == Route::Kind::kWrite) {
    committed(*reply);
  }
  if (req.method == "GET" && reply->status == 200) {
    // Weak: the same answer, not necessarily the same bytes from another replica.
    const std::string etag =
        "W/\"" + std::to_string(std::hash<std::string_view>{}(reply->body)) + "\"";
    res.set_header("ETag", etag);
    if (req.get_header_value("If-None-Match") == etag) {
      reply->status = 304;
      reply->body.clear();
    }
  }
  send(res, rid, *reply);
}

Result<Reply> RequestPipeline::run_write(const Route& route, const Call& call, bool& replayed) {
  const std::string key = call.header("Idempotency-Key");
  CORRAL_RETURN_IF_ERROR(check_idempotency_key(key));
  const httplib::Request& req = call.req;
  const std::string request_hash = sha256_hex(req.method + " " + req.path + "\n" + req.body);
  Reply reply;
  const Status s = store_.transact([&](store::Tx& tx) {
    replayed = false;
    call.actions->clear();  // a retried attempt appends its audit entries again
    if (!key.empty()) {
      CORRAL_ASSIGN_OR_RETURN(auto seen, tx.security().get_idempotency(call.who.id, key));
      if (seen) {
        if (seen->request_hash != request_hash) {
          return core::invalid_argument("Idempotency-Key",
                                        "was already used for a different request");
        }
        reply = Reply();
        reply.status = seen->status;
        reply.body = seen->response_body;
        replayed = true;
        return Status();
      }
    }
    CORRAL_ASSIGN_OR_RETURN(reply, route.in_tx(call, tx));
    if (key.empty()) return Status();
    const Status put = tx.security().put_idempotency({.scope = call.who.id,
                                                      .key = key,
                                                      .request_hash = request_hash,
                                                      .status = reply.status,
                                                      .response_body = reply.body,
                                                      .created_at = clock_.now()});
    // A concurrent first attempt with the same key committed meanwhile: run again from
    // the start (transact retries Aborted), which finds its answer.
    if (put.code() == StatusCode::kAlreadyExists) return core::raced("idempotency key raced");
    return put;
  });
  if (!s.ok()) return s;
  return reply;
}

Status RequestPipeline::change(const std::function<Status(store::Tx&, Effects&)>& fn) {
  Reply reply;
  std::vector<LogEvent>* const actions = t_serving_actions;
  const std::size_t mark = actions != nullptr ? actions->size() : 0;
  const Status s = store_.transact([&](store::Tx& tx) {
    reply.effects = Effects();
    if (actions != nullptr) actions->resize(mark, LogEvent("action"));
    return fn(tx, reply.effects);
  });
  if (s.ok()) committed(reply);
  return s;
}

void RequestPipeline::committed(const Reply& reply) {
  const Effects& fx = reply.effects;
  apply_effects(fx, board_);
  if (anchor_ != nullptr) anchor_->poke();
  metrics_.jobs_succeeded += fx.succeeded;
  metrics_.jobs_failed += fx.failed;
  metrics_.count_committed(fx.tenant_events);
  if (!reply.wake_scheduler) return wake_loop(fx, loop_);
  // A submission alone only adds one pending job: the loop reads just it. Anything else
  // may have changed what the loop keeps in memory: a full re-read.
  if (reply.submitted_job != 0 && !fx.wake_scheduler) {
    loop_.job_submitted(core::JobId(reply.submitted_job));
  } else {
    loop_.wake();
  }
}

Status RequestPipeline::audit(store::Tx& tx, const Call& call, std::string action,
                              std::string target, std::string before, std::string after) const {
  if (call.actions != nullptr) {
    call.actions->push_back(LogEvent("action")
                                .add("actor", call.actor())
                                .add("action", action)
                                .add("target", target)
                                .add("request", call.request_id));
  }
  return append_audit(tx.audit(), {.actor = call.actor(),
                                   .action = std::move(action),
                                   .target = std::move(target),
                                   .before = std::move(before),
                                   .after = std::move(after),
                                   .request_id = call.request_id,
                                   .time = clock_.now()});
}

void RequestPipeline::send(httplib::Response& res, const std::string& request_id,
                           const Reply& reply) {
  res.status = reply.status;
  res.set_header("X-Request-Id", request_id);
  for (const auto& [name, value] : reply.headers) res.set_header(name, value);
  res.set_content(reply.body, reply.content_type);
  const int cls = reply.status / 100 - 2;
  if (cls >= 0 && cls < 4) ++metrics_.http_responses[static_cast<std::size_t>(cls)];
}

void RequestPipeline::fail(httplib::Response& res, const std::string& request_id, const Status& s) {
  if (s.code() == StatusCode::kInternal || s.code() == StatusCode::kUnavailable ||
      s.code() == StatusCode::kDataLoss) {
    ++metrics_.store_errors;
    process_log().write(LogEvent("request_failed", LogLevel::kError)
                            .add("request", request_id)
                            .add("code", std::string(error_code(s)))
                            .add("error", s.to_string()));
  }
  if (s.code() == StatusCode::kResourceExhausted) {
    res.set_header("Retry-After", std::to_string(retry_after_s(s)));
  }
  Reply reply;
  reply.status = http_status(s.code());
  reply.body = error_json(s);
  send(res, request_id, reply);
}

void RequestPipeline::install_fallbacks(httplib::Server& http) {
  http.set_error_handler(
      httplib::Server::HandlerWithResponse([this](const httplib::Request&, httplib::Response& res) {
        // Our handlers' errors already carry their JSON body; keep it.
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        Status s(StatusCode::kNotFound, "no such endpoint");
        if (res.status == 413) s = core::invalid_argument("", "request body larger than 1 MiB");
        if (res.status == 400) s = core::invalid_argument("", "malformed request");
        if (res.status == 405) s = core::invalid_argument("", "method not allowed");
        const int status = res.status == 404 || res.status == 0 ? 404 : res.status;
        res.status = status;
        res.set_header("X-Request-Id", new_request_id());
        res.set_content(error_json(s), "application/json");
        return httplib::Server::HandlerResponse::Handled;
      }));
  http.set_exception_handler(
      [this](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
        fail(res, new_request_id(), core::internal_error("unexpected error"));
      });
  http.set_payload_max_length(kMaxBodyBytes);
  // httplib answers "Accept-Encoding: br" (every browser sends it) with Brotli at its
  // slowest quality: 1.9 s for the 1.8 MiB of a 10,000-GPU /v1/fleet, against 0.02 s for
  // gzip, which shrinks it to 100 KiB. So a request's "br" is struck out before routing
  // and gzip answers. httplib passes the request as const, but the object is its own
  // non-const local (Server::process_request), so writing it here is defined.
  http.set_pre_routing_handler([](const httplib::Request& req, httplib::Response&) {
    auto& headers = const_cast<httplib::Headers&>(req.headers);
    // httplib reads a POST without Content-Length until the client closes the connection,
    // which a keep-alive client never does: the read times out and answers 400 after
    // seconds. The message has no body (RFC 9112 section 6.3), so it is read as such.
    if (req.method != "GET" && req.method != "HEAD" && headers.count("Content-Length") == 0 &&
        headers.count("Transfer-Encoding") == 0) {
      headers.emplace("Content-Length", "0");
    }
    for (auto it = headers.find("Accept-Encoding");
         it != headers.end() && it->first == "Accept-Encoding"; ++it) {
      std::string& v = it->second;
      for (auto at = v.find("br"); at != std::string::npos; at = v.find("br")) v.replace(at, 2, "");
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
}

}  // namespace corral::server
