#pragma once

// A report page parsed with libxml2's HTML parser (the one a test trusts not to be ours), and
// XPath over it.

#include <libxml/HTMLparser.h>
#include <libxml/xpath.h>

#include <memory>
#include <string>
#include <vector>

namespace rulestream::testing {

class HtmlDocument {
 public:
  // Parses `html`; parse errors are kept (errors()), never fatal, as a browser would. libxml2's
  // parser knows HTML 4 only: its "Tag section invalid" for the HTML5 elements a page uses
  // (header, section, figure, figcaption, canvas) is no error in the page and is not kept.
  explicit HtmlDocument(const std::string& html);
  ~HtmlDocument();
  HtmlDocument(const HtmlDocument&) = delete;
  HtmlDocument& operator=(const HtmlDocument&) = delete;

  bool parsed() const { return document_ != nullptr; }
  const std::vector<std::string>& errors() const { return errors_; }

  // The text content of every node the XPath expression selects, in document order.
  std::vector<std::string> texts(const std::string& xpath) const;
  std::size_t count(const std::string& xpath) const { return texts(xpath).size(); }

 private:
  htmlDocPtr document_ = nullptr;
  std::vector<std::string> errors_;
};

}  // namespace rulestream::testing
