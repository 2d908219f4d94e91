#include "fabric/cli/completion.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <vector>

namespace fabric::completion {

namespace {

enum class value_kind { none, word, device, host, file, dir, words };

struct option_info {
  std::vector<std::string> names;  // "-a", "--addr"
  std::string description;
  value_kind kind = value_kind::none;
  std::vector<std::string> words;
};

// The words a type name lists: "{udp,ipoib}" (CLI::IsMember, as in
// "TEXT:{udp,ipoib}") or alternatives such as "i|n|l|g" and "[col|N|all|s]".
// Upper-case words are placeholders (N), not values.
std::vector<std::string> split_words(const std::string& list, char sep) {
  std::vector<std::string> words;
  std::size_t start = 0;
  while (start <= list.size()) {
    auto end = list.find(sep, start);
    auto word = list.substr(start, end == std::string::npos ? std::string::npos : end - start);
    auto first = word.find_first_not_of(' ');
    auto last = word.find_last_not_of(' ');
    if (first != std::string::npos) {
      word = word.substr(first, last - first + 1);
      bool placeholder = std::all_of(word.begin(), word.end(), [](unsigned char c) { return std::isupper(c) || std::isdigit(c); });
      if (!placeholder) words.push_back(word);
    }
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return words;
}

std::vector<std::string> member_words(const std::string& type_name) {
  auto open = type_name.find('{');
  auto close = type_name.find('}', open);
  if (open != std::string::npos && close != std::string::npos)
    return split_words(type_name.substr(open + 1, close - open - 1), ',');
  if (type_name.find('|') == std::string::npos) return {};
  std::string list = type_name;
  std::erase_if(list, [](char c) { return c == '[' || c == ']'; });
  return split_words(list, '|');
}

/// The options of `app` and of its subcommands (once each: a subcommand
/// may share an option's name with another).
std::vector<option_info> collect(const CLI::App& app) {
  std::vector<option_info> out;
  std::vector<const CLI::Option*> options;
  for (const CLI::Option* opt : app.get_options()) options.push_back(opt);
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    for (const CLI::Option* opt : sub->get_options()) options.push_back(opt);
  for (const CLI::Option* opt : options) {
    option_info info;
    for (const auto& s : opt->get_snames()) info.names.push_back("-" + s);
    for (const auto& l : opt->get_lnames()) info.names.push_back("--" + l);
    if (info.names.empty()) continue;  // positional
    if (std::any_of(out.begin(), out.end(), [&](const option_info& seen) { return seen.names == info.names; })) continue;
    info.description = opt->get_description();
    if (opt->get_expected_min() > 0 || (opt->get_type_size() != 0 && opt->get_expected_max() > 0)) {
      std::string type = opt->get_type_name();
      info.words = member_words(type);
      if (!info.words.empty())
        info.kind = value_kind::words;
      else if (type.find(device_type) != std::string::npos)
        info.kind = value_kind::device;
      else if (type.find(host_type) != std::string::npos)
        info.kind = value_kind::host;
      else if (type.find(dir_type) != std::string::npos)
        info.kind = value_kind::dir;
      else if (type.find(file_type) != std::string::npos)
        info.kind = value_kind::file;
      else
        info.kind = value_kind::word;
    }
    out.push_back(std::move(info));
  }
  return out;
}

std::string join(const std::vector<std::string>& v, std::string_view sep) { return fmt::format("{}", fmt::join(v, sep)); }

std::vector<std::string> subcommand_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) names.push_back(sub->get_name());
  return names;
}

std::string function_name(std::string_view tool) {
  std::string name = fmt::format("_fabric_{}", tool);
  for (char& c : name)
    if (c == '-') c = '_';
  return name;
}

// Single quotes for zsh: close, escape, reopen.
std::string zsh_quote(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\'')
      out += "'\\''";
    else if (c == '[' || c == ']' || c == ':')
      out += std::string("\\") + c;
    else
      out += c;
  }
  return out;
}

}  // namespace

std::string bash_script(std::string_view tool, const CLI::App& app) {
  auto options = collect(app);
  std::vector<std::string> all = subcommand_names(app);
  std::string cases;
  for (const auto& o : options) {
    all.insert(all.end(), o.names.begin(), o.names.end());
    std::string action;
    switch (o.kind) {
      case value_kind::none: continue;
      case value_kind::word: action = "return"; break;
      case value_kind::words: action = fmt::format("COMPREPLY=($(compgen -W '{}' -- \"$cur\")); return", join(o.words, " ")); break;
      case value_kind::device: action = "COMPREPLY=($(compgen -W \"$(ls /sys/class/infiniband 2>/dev/null)\" -- \"$cur\")); return"; break;
      case value_kind::host: action = "COMPREPLY=($(compgen -A hostname -- \"$cur\")); return"; break;
      case value_kind::file: action = "COMPREPLY=($(compgen -f -- \"$cur\")); return"; break;
      case value_kind::dir: action = "COMPREPLY=($(compgen -d -- \"$cur\")); return"; break;
    }
    cases += fmt::format("    {})\n      {}\n      ;;\n", join(o.names, "|"), action);
  }
  auto fn = function_name(tool);
  return fmt::format(
      "# bash completion for {0}; generated from {0}'s own option definitions\n"
      "{1}() {{\n"
      "  local cur=${{COMP_WORDS[COMP_CWORD]}} prev=${{COMP_WORDS[COMP_CWORD-1]}}\n"
      "  case $prev in\n"
      "{2}"
      "  esac\n"
      "  COMPREPLY=($(compgen -W '{3}' -- \"$cur\"))\n"
      "}}\n"
      "complete -F {1} {0}\n",
      tool, fn, cases, join(all, " "));
}

std::string zsh_script(std::string_view tool, const CLI::App& app) {
  std::string specs;
  for (const auto& o : collect(app)) {
    std::string action;
    switch (o.kind) {
      case value_kind::none: break;
      case value_kind::word: action = ":value: "; break;
      case value_kind::words: action = fmt::format(":value:({})", join(o.words, " ")); break;
      case value_kind::device: action = ":device:_files -W /sys/class/infiniband"; break;
      case value_kind::host: action = ":host:_hosts"; break;
      case value_kind::file: action = ":file:_files"; break;
      case value_kind::dir: action = ":directory:_files -/"; break;
    }
    std::string desc = zsh_quote(o.description);
    if (o.names.size() == 1) {
      specs += fmt::format("  '{}[{}]{}' \\\n", o.names[0], desc, action);
    } else {
      specs += fmt::format("  '({0})'{{{1}}}'[{2}]{3}' \\\n", join(o.names, " "), join(o.names, ","), desc, action);
    }
  }
  // A tool with subcommands: the first word may be one, the rest files.
  if (auto subs = subcommand_names(app); !subs.empty())
    specs += fmt::format("  '1:command:({})' \\\n  '*:file:_files' \\\n", join(subs, " "));
  return fmt::format("#compdef {0}\n# zsh completion for {0}; generated from {0}'s own option definitions\n"
                     "_arguments -s \\\n{1}  && return 0\n",
                     tool, specs);
}

}  // namespace fabric::completion
