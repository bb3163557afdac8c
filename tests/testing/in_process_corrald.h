// corrald in the test's own process (server::Corrald), on a clock the test owns: a
// core::ManualClock the test advances instead of sleeping past heartbeat silences,
// restart backoffs and stop graces. It serves real HTTP on 127.0.0.1 (port 0), so the
// test talks to it exactly as to a CorraldProcess.
//
// Thread safety: one test thread drives it; corrald serves on its own threads.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "core/result.h"
#include "server/server.h"
#include "testing/corrald_process.h"

namespace corral::testing {

class InProcessCorrald {
 public:
  // Writes `config_yaml` as corrald's --config (empty: defaults) and starts it on `clock`
  // over SQLite in `data_dir` (or `store`, a PostgreSQL URL).
  static core::Result<std::unique_ptr<InProcessCorrald>> start(std::filesystem::path data_dir,
                                                               const core::Clock& clock,
                                                               const std::string& config_yaml,
                                                               const std::string& store = {});
  ~InProcessCorrald();
  InProcessCorrald(const InProcessCorrald&) = delete;
  InProcessCorrald& operator=(const InProcessCorrald&) = delete;

  const std::string& addr() const { return corrald_->address(); }
  const std::vector<std::pair<std::string, std::string>>& routes() const {
    return corrald_->routes();
  }
  const std::string& admin_token() const { return admin_token_; }
  const std::string& join_token() const { return join_token_; }
  TestClient client(const std::string& token) const { return TestClient(addr(), token); }

 private:
  InProcessCorrald() = default;
  std::unique_ptr<server::Corrald> corrald_;
  std::thread serving_;
  std::string admin_token_;
  std::string join_token_;
};

}  // namespace corral::testing
