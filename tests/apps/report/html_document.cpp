#include "tests/apps/report/html_document.hpp"

#include <libxml/xpathInternals.h>

namespace rulestream::testing {
namespace {

void keep_error(void* context, const xmlError* error) {
  const std::string message = error->message ? error->message : "";
  for (const char* html5 : {"header", "section", "figure", "figcaption", "canvas"}) {
    if (message == std::string("Tag ") + html5 + " invalid\n") return;
  }
  auto* errors = static_cast<std::vector<std::string>*>(context);
  errors->push_back(std::to_string(error->line) + ": " + (error->message ? error->message : ""));
}

}  // namespace

HtmlDocument::HtmlDocument(const std::string& html) {
  htmlParserCtxtPtr context = htmlNewParserCtxt();
  xmlSetStructuredErrorFunc(&errors_,
                            [](void* user, xmlErrorPtr error) { keep_error(user, error); });
  document_ = htmlCtxtReadMemory(context, html.data(), static_cast<int>(html.size()), "report.html",
                                 "utf-8", HTML_PARSE_NONET);
  xmlSetStructuredErrorFunc(nullptr, nullptr);
  htmlFreeParserCtxt(context);
}

HtmlDocument::~HtmlDocument() {
  if (document_ != nullptr) xmlFreeDoc(document_);
}

std::vector<std::string> HtmlDocument::texts(const std::string& xpath) const {
  std::vector<std::string> found;
  if (document_ == nullptr) return found;
  xmlXPathContextPtr context = xmlXPathNewContext(document_);
  xmlXPathObjectPtr result =
      xmlXPathEvalExpression(reinterpret_cast<const xmlChar*>(xpath.c_str()), context);
  if (result != nullptr && result->nodesetval != nullptr) {
    for (int i = 0; i < result->nodesetval->nodeNr; ++i) {
      xmlChar* text = xmlNodeGetContent(result->nodesetval->nodeTab[i]);
      found.emplace_back(text ? reinterpret_cast<const char*>(text) : "");
      xmlFree(text);
    }
  }
  xmlXPathFreeObject(result);
  xmlXPathFreeContext(context);
  return found;
}

}  // namespace rulestream::testing
