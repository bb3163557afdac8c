#include "testing/in_process_corrald.h"

#include <fstream>

namespace corral::testing {
namespace {

std::string first_line(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::string s;
  std::getline(in, s);
  return s;
}

}  // namespace

core::Result<std::unique_ptr<InProcessCorrald>> InProcessCorrald::start(
    std::filesystem::path data_dir, const core::Clock& clock, const std::string& config_yaml,
    const std::string& store) {
  server::ServerOptions options{
      .data_dir = data_dir.string(), .listen = "127.0.0.1:0", .store = store, .http_threads = 16};
  if (!config_yaml.empty()) {
    options.config_path = (data_dir / "corrald.yaml").string();
    std::filesystem::create_directories(data_dir);
    std::ofstream(options.config_path) << config_yaml;
  }
  std::unique_ptr<InProcessCorrald> out(new InProcessCorrald());
  CORRAL_ASSIGN_OR_RETURN(out->corrald_, server::Corrald::start(options, clock));
  out->admin_token_ = first_line(data_dir / "admin.token");
  out->join_token_ = first_line(data_dir / "join.token");
  server::Corrald* corrald = out->corrald_.get();
  out->serving_ = std::thread([corrald] { corrald->serve(); });
  // Bound before start() returned: requests queue until serve() accepts them.
  return out;
}

InProcessCorrald::~InProcessCorrald() {
  corrald_->stop();
  if (serving_.joinable()) serving_.join();
}

}  // namespace corral::testing
