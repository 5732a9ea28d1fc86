// Helpers of the gpuwatch end-to-end tests: run the binary against the fake
// NVML at a frozen scenario time and capture what it printed.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace gpuwatch::testing {
namespace fs = std::filesystem;

inline const std::string kFixed = "--scenario scenarios/test/fixed.yaml --color=never";

inline std::string Slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

struct CmdResult {
  int code = -1;
  std::string out;
  std::string err;
};

// Runs `BINARY ARGS` (gpuwatch or gpuwatch-full of the build, or a path)
// with ENV (shell assignments) at frozen scenario time 100, with leases in a
// directory of its own (ENV may name another).
inline CmdResult RunBinary(const std::string& binary, const std::string& args,
                           const std::string& env = "") {
  static int n = 0;
  const fs::path dir = fs::temp_directory_path() /
                       ("gw-cli-" + std::to_string(getpid()) + "-" + std::to_string(n++));
  fs::create_directories(dir);
  const std::string cmd =
      "cd " + std::string(GPUWATCH_SOURCE_DIR) +
      " && env GPUWATCH_FAKE_TIME=100 GPUWATCH_RUNTIME_DIR=" + (dir / "run").string() + " " + env +
      " " +
      (binary.find('/') == std::string::npos ? GPUWATCH_BINARY_DIR + ("/" + binary) : binary) +
      " " + args + " >" + (dir / "out").string() + " 2>" + (dir / "err").string();
  const int status = std::system(cmd.c_str());
  CmdResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = Slurp(dir / "out");
  r.err = Slurp(dir / "err");
  fs::remove_all(dir);
  return r;
}

// Runs `gpuwatch ARGS` (RunBinary).
inline CmdResult Gpuwatch(const std::string& args, const std::string& env = "") {
  return RunBinary("gpuwatch", args, env);
}

// The lines of `readelf FLAGS binary` that hold `needle`.
inline std::string ReadElf(const std::string& flags, const std::string& binary,
                           std::string_view needle) {
  std::string out;
  FILE* p = popen(("readelf " + flags + " " + binary + " 2>&1").c_str(), "r");
  if (p == nullptr) return out;
  char buf[512];
  while (fgets(buf, sizeof buf, p) != nullptr) {
    if (std::string_view(buf).find(needle) != std::string_view::npos) out += buf;
  }
  pclose(p);
  return out;
}

// The shared libraries `binary` needs (readelf's NEEDED lines).
inline std::string Needed(const std::string& binary) { return ReadElf("-d", binary, "(NEEDED)"); }

}  // namespace gpuwatch::testing
