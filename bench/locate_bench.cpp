// The report's locating at scale, on the host: a synthetic fabric document
// of a three-level fat tree of N hosts (16 a leaf, 16 leaves and 8
// aggregation switches a pod, 8 cores a group), written and read back,
// and every pair of its hosts judged, those that cross one faulty
// aggregation uplink bad and one in a thousand of the rest at random;
// prints the time of each stage and the peak RSS.
// Usage: locate_bench [N]    (default 2000)
#include "fabric-sweep/discover/document.hpp"
#include "fabric-sweep/discover/route.hpp"
#include "fabric-sweep/report/locate/locate.hpp"

#include "../tests/subnet/synthetic.hpp"

#include "fabric/cli/cli.hpp"

#include <fmt/format.h>

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <string>

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

long peak_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024;
}

}  // namespace

int main(int argc, char** argv) {
  int hosts = argc > 1 ? std::stoi(argv[1]) : 2000;
  namespace sn = sweep::subnet;
  auto t0 = std::chrono::steady_clock::now();
  auto built = synthetic::fat_tree({.leaves = 16, .spines = 8, .hosts = 16, .pods = (hosts + 255) / 256, .cores = 8,
                                    .host_count = hosts});
  auto text = sn::document_text(fabric::cli::make_document("fabric-sweep", {}), built);
  auto path = fmt::format("/tmp/locate-bench-{}.json", getpid());
  if (auto* f = std::fopen(path.c_str(), "wb")) {
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
  }
  auto made = seconds_since(t0);
  auto size_mb = static_cast<double>(text.size()) / 1e6;
  text = std::string();
  auto before_read = peak_mb();

  t0 = std::chrono::steady_clock::now();
  auto read = sn::read_document_file(path);
  auto read_s = seconds_since(t0);
  auto read_mb = peak_mb();
  std::remove(path.c_str());
  const auto& f = read.model;

  sn::index at(f);
  std::vector<sweep::locate::endpoint_hint> ends;
  std::vector<std::uint32_t> ca;
  for (std::uint32_t i = 0; i < f.nodes.size(); ++i)
    if (f.nodes[i].type == sn::node_type::ca) {
      ends.push_back({f.nodes[i].description.substr(0, f.nodes[i].description.find(' ')), {}, {}});
      ca.push_back(i);
    }
  auto faulty = at.link_of({synthetic::node_named(f, "agg01-1"), 17});  // agg01-1 to core1-01
  std::mt19937 rng(1);
  std::vector<sweep::locate::judged_pair> pairs;
  pairs.reserve(ca.size() * (ca.size() - 1) / 2);
  sn::route r;
  std::size_t bad = 0;
  for (std::uint32_t a = 0; a < ca.size(); ++a)
    for (std::uint32_t b = a + 1; b < ca.size(); ++b) {
      bool crosses = false;
      for (auto [x, y] : {std::pair{a, b}, std::pair{b, a}}) {
        sn::walk_route(at, {ca[x], 1}, f.nodes[ca[y]].ports.front().lid, r);
        crosses = crosses || std::find(r.links.begin(), r.links.end(), *faulty) != r.links.end();
      }
      bool is_bad = crosses || rng() % 1000 == 0;
      bad += is_bad ? 1 : 0;
      pairs.push_back({a, b, is_bad});
    }

  t0 = std::chrono::steady_clock::now();
  auto loc = sweep::locate::locate(f, &f, ends, pairs);
  auto locate_s = seconds_since(t0);
  std::size_t switches = 0;
  for (const auto& n : f.nodes) switches += n.type == sn::node_type::switch_node ? 1 : 0;
  fmt::print("locate: {} hosts, {} switches, {} links; document {:.1f} MB (made in {:.1f} s)\n", ca.size(), switches,
             at.links().size(), size_mb, made);
  fmt::print("locate: document read in {:.2f} s (peak RSS {} MB before, {} MB after)\n", read_s, before_read, read_mb);
  fmt::print("locate: {} pairs, {} bad: located in {:.2f} s, {} routed; peak RSS {} MB\n", pairs.size(), bad, locate_s,
             loc.pairs_routed, peak_mb());
  if (!loc.suspects.empty()) {
    const auto& s = loc.suspects.front();
    fmt::print("locate: first of {} suspects: {} port {} - {} port {} (score {:.1f}): {}\n", loc.suspects.size(),
               s.ends[0].description, s.ends[0].port, s.ends[1].description, s.ends[1].port, s.score, s.reason);
  }
  for (std::size_t i = 1; i < loc.suspects.size() && i < 6; ++i)
    fmt::print("locate: then {} port {} - {} port {} (score {:.1f}): {}\n", loc.suspects[i].ends[0].description, loc.suspects[i].ends[0].port,
               loc.suspects[i].ends[1].description, loc.suspects[i].ends[1].port, loc.suspects[i].score, loc.suspects[i].reason);
  bool found = !loc.suspects.empty() && at.link_of({synthetic::node_named(f, "agg01-1"), 17}) &&
               ((loc.suspects.front().ends[0].description == "agg01-1" && loc.suspects.front().ends[0].port == 17) ||
                (loc.suspects.front().ends[1].description == "agg01-1" && loc.suspects.front().ends[1].port == 17));
  return found ? 0 : 1;
}
