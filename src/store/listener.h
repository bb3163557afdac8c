// Listener: how corrald replicas on one PostgreSQL wake each other (LISTEN/NOTIFY), so
// a job submitted through one replica reaches the scheduler that owns its shard on
// another at once, and an agent's long poll on one replica wakes when another places
// work on its node (docs/scale-out.md).
//
// A listener holds one connection of its own: it LISTENs on its channels and calls the
// handler from its thread for each notification, and it sends the notifications queued
// with send() (outside any transaction; Tx::notify() sends one with a transaction's
// commit instead). After its connection broke and came back it calls the handler once
// with an empty channel: notifications may have been missed, so the caller should
// re-read whatever it waits on.
//
// Thread safety: send() from any thread; the handler runs on the listener's thread.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace corral::store {

class Listener {
 public:
  using Handler = std::function<void(std::string_view channel, std::string_view payload)>;
  virtual ~Listener() = default;
  // Queues a notification; the listener's thread sends what is queued in one round trip.
  virtual void send(std::string channel, std::string payload) = 0;
};

// For a PostgreSQL URL: a started listener on `channels`. For anything else (SQLite, one
// process): null.
std::unique_ptr<Listener> open_listener(const std::string& url, std::vector<std::string> channels,
                                        Listener::Handler on_notify);

}  // namespace corral::store
