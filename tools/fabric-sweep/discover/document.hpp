#pragma once
/// The fabric document: what `fabric-sweep discover` writes (schema
/// fabric-toolkit/fabric-sweep-discover/1) and the report reads back. Each
/// node is one item of `results`; the walk's when and where are its
/// `summary`. The reader takes the file as hostile: whatever it holds, it
/// gives a model, notes on what it left out, or one error line.

#include "subnet.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace sweep::subnet {

/// The schema key of a fabric document.
inline constexpr std::string_view document_schema = "fabric-toolkit/fabric-sweep-discover/1";
/// The largest document read: some 10,000 hosts, and memory bounded by it.
inline constexpr std::size_t max_document_bytes = std::size_t{128} << 20;
/// NodeDescription is 64 bytes; a longer one is cut, with a note.
inline constexpr std::size_t max_description_bytes = 64;
/// The notes kept of one document; the rest are counted.
inline constexpr std::size_t max_notes = 20;

/// One node as an item of the document's `results`.
nlohmann::json node_json(const node& n, std::size_t index);
/// The document's `summary`: when and from where, and the counts.
nlohmann::json summary_json(const fabric& f);

/// The whole document as compact text, one line: `head` (the skeleton's
/// document: tool, host, verdict, options) with the fabric document's
/// schema and role, the nodes as its results and the fabric's summary.
std::string document_text(nlohmann::json head, const fabric& f);

/// A document read: the model, and what was left out of it and why.
struct reading {
  fabric model;
  std::vector<std::string> notes;
};

/// Reads a fabric document's text. Throws fabric::error (usage) with one
/// line for a text that is not one: not JSON, cut short, not UTF-8,
/// another schema, a field of the wrong type or range. What a walk may
/// not have meant (a GUID twice, a link whose ends disagree, a table
/// entry beyond the switch's ports, an overlong description) is left out
/// or cut, and noted.
reading read_document(std::string_view text);

/// The same from a file (at most max_document_bytes); errors name it.
reading read_document_file(const std::string& path);
/// The same from a file already open (a pipe waited for): the report
/// opens every input before it reads any. Errors name it as `name`.
reading read_document_fd(int fd, const std::string& name);

}  // namespace sweep::subnet
