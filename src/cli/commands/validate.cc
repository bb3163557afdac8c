#include "cli/commands/validate.h"

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include <CLI/CLI.hpp>

#include "core/job_spec_parse.h"

namespace corral::cli {
namespace {

// Reads at most one byte past the parser's size limit, so a huge file costs no more
// than a rejected one and the parser still reports it as too large.
std::string read_limited(std::istream& in) {
  std::string text(core::kMaxSpecBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

// The file's text, or nullopt after printing why it cannot be read.
std::optional<std::string> read_input(const std::string& file, std::istream& in,
                                      std::ostream& err) {
  if (file == "-") {
    std::string text = read_limited(in);
    if (in.bad()) {
      err << "corral validate: cannot read standard input\n";
      return std::nullopt;
    }
    return text;
  }
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec)) {
    err << "corral validate: cannot read " << file << ": is a directory\n";
    return std::nullopt;
  }
  std::ifstream stream(file, std::ios::binary);
  if (!stream) {
    err << "corral validate: cannot read " << file << ": "
        << std::make_error_code(static_cast<std::errc>(errno)).message() << "\n";
    return std::nullopt;
  }
  std::string text = read_limited(stream);
  if (stream.bad()) {
    err << "corral validate: cannot read " << file << "\n";
    return std::nullopt;
  }
  return text;
}

core::SpecFormat format_for(const std::string& file) {
  return std::filesystem::path(file).extension() == ".json" ? core::SpecFormat::kJson
                                                            : core::SpecFormat::kYaml;
}

}  // namespace

int run_validate(const ValidateOptions& options, std::istream& in, std::ostream& out,
                 std::ostream& err) {
  int exit_code = kExitOk;
  for (const std::string& file : options.files) {
    const std::optional<std::string> text = read_input(file, in, err);
    if (!text) {
      exit_code = kExitUsage;
      continue;
    }
    const core::ParseOutcome outcome = core::parse_job_spec(*text, format_for(file));
    if (!outcome.ok()) {
      const std::string name = file == "-" ? "<stdin>" : file;
      for (const auto& error : outcome.errors) {
        err << name << ": " << to_string(error) << "\n";
      }
      if (exit_code == kExitOk) {
        exit_code = kExitInvalid;
      }
      continue;
    }
    if (!options.quiet) {
      out << core::job_spec_to_json(*outcome.spec) << "\n";
    }
  }
  return exit_code;
}

void add_validate_command(CLI::App& app, std::function<int()>& run) {
  auto options = std::make_shared<ValidateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "validate",
      "Check job spec files (YAML or JSON) and print each as normalized JSON, or every error");
  cmd->add_option("files", options->files, "Job spec files; - reads standard input")->required();
  cmd->add_flag("-q,--quiet", options->quiet, "Print nothing for valid files");
  cmd->callback([options, &run] {
    run = [options] { return run_validate(*options, std::cin, std::cout, std::cerr); };
  });
}

}  // namespace corral::cli
