#pragma once
/// The report's last stage: the judged matrix as a human table, a JSON
/// document, an HTML page, gauges, CSV and a list of pairs to run again.
/// Each renderer reads the matrix; none does I/O.

#include "fabric-sweep/options.hpp"
#include "fabric-sweep/report/merge/matrix.hpp"

#include "fabric/cli/console.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sweep {

/// The report's options, the verdict's as it judged (report_verdict):
/// the document's and the page's.
nlohmann::json report_options_json(const options& opt, const matrix& m);
nlohmann::json report_options_json(const options& opt, const verdict_options& v);
/// report_options_json of a report given nothing but its input.
nlohmann::json default_report_options_json();
/// The options of `given` whose values differ from `defaults` (both as
/// report_options_json writes them), in the document's order, each named
/// as the command line names it, its value as text: what the page shows.
std::vector<std::pair<std::string, std::string>> changed_options(const nlohmann::json& given, const nlohmann::json& defaults);

/// The report's document: its options, every pair, the summary.
/// The report's document but its results, which each_result hands over
/// one at a time as the document is written.
void to_json(nlohmann::json& j, const options& opt, const matrix& m);
void each_result(const matrix& m, const fabric::result_sink& sink);

/// Hosts up to which the page and the human table draw every pair's cell;
/// above it, the page draws an overview of groups and a table of the bad
/// pairs, and the human output its summary lines alone.
inline constexpr std::size_t cells_up_to = 100;
/// Failed, slow and re-tested pairs the human output names, each kind; the
/// rest are counted (--csv and -j list every pair).
inline constexpr std::size_t pair_lines_up_to = 100;

/// The verdict's rule in one sentence: "slow below 93.1 Gb/s: 0.93 of the
/// healthy pairs' median 100.1 Gb/s (45 of 45 pairs)".
std::string bar_rule(const matrix& m);

/// The human table, a cell per ordered pair, in O(pairs), and the lines
/// that name the failed, slow, re-tested and worst.
std::string format_matrix(const matrix& m);

/// Groups of hosts for the page's overview: a switch's, or a name prefix's.
struct host_group {
  std::string name;
  std::vector<std::uint32_t> hosts;  ///< indices into matrix::hosts
};
/// From Slurm's topology.conf text: each leaf switch (SwitchName=... Nodes=
/// host list) a group, in the file's order, hosts of the matrix only; the
/// matrix's hosts no switch names are one group "(no switch)". Throws a
/// usage error for a Nodes= list that does not expand.
std::vector<host_group> groups_of_topology(std::string_view conf, const std::vector<std::string>& hosts);
/// By host-name prefix (the name without its last run of digits) when that
/// gives 2 to 64 groups, else in blocks of consecutive hosts.
std::vector<host_group> groups_of_names(const std::vector<std::string>& hosts);

/// What the page tells besides the matrix.
struct page_context {
  std::vector<std::pair<std::string, std::string>> options;  ///< changed_options: name, value
  std::string generated;  ///< when the report was made (UTC)
  std::vector<host_group> groups;  ///< the overview's groups (default: by name)
};
/// A self-contained HTML page: an SVG heat map, or the overview above
/// cells_up_to hosts. No network fetches.
std::string html_page(const matrix& m, const page_context& ctx = {});

/// node_exporter's textfile-collector format: per-host aggregates and the
/// bad pairs; with `every_pair`, every pair's series too.
std::string prometheus_text(const matrix& m, bool every_pair = false);

/// One row per pair (RFC 4180, a header row).
std::string csv_text(const matrix& m);

// ---- suspect links (suspects.cpp) -------------------------------------------

/// One field of a suspect link as every rendering gives it: its key (the
/// JSON's, the CSV's column), its title for people (the page's column),
/// its words on the text report's line (`human`, "{}" the value; empty:
/// not on the line), its value as text (CSV, page) and as JSON, and
/// whether the line and the page say it for this suspect.
struct suspect_field {
  std::string_view key, title, human;
  std::string (*text)(const locate::suspect&);
  nlohmann::json (*json)(const locate::suspect&);
  bool (*said)(const locate::suspect&);
};
/// Every field but the ends, in the order the renderings give them.
const std::vector<suspect_field>& suspect_fields();

/// A suspect as summary.suspects lists it: its `ends`, then its fields.
nlohmann::json suspect_json(const locate::suspect& s);
/// What the locating read and walked, in words: "64 links; 32 of 32 hosts
/// found, 496 pairs located, 0 not; counters compared ...".
std::string located_words(const matrix& m);
/// The text report's section: the suspect links, worst first, each on a
/// line with its reason below; what the locating read, on one line.
std::string suspects_text(const matrix& m);
/// One row per suspect link, worst first (RFC 4180, a header row): its
/// rank, its ends, its fields. The header alone without suspects.
std::string suspects_csv_text(const matrix& m);

/// The slow and failed pairs as ClusterKit's custom-mode pairs file:
/// `ROUND HOSTA HOSTB` lines, rounds from 1, no host twice in a round
/// (pack_rounds), under a '#' header.
std::string rerun_text(const matrix& m);

}  // namespace sweep
