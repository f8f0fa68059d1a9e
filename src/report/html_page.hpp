// The HTML report's page as built into the program: src/report/html/page.html, page.css and
// page.js, made into string constants at build time (cmake/embed_page.cmake). page.html holds
// the markers the writer replaces, each alone on its line: /*LOWALLOC_CSS*/, /*LOWALLOC_JS*/ and
// <!--LOWALLOC_DATA-->.
#ifndef LOWALLOC_SRC_REPORT_HTML_PAGE_HPP
#define LOWALLOC_SRC_REPORT_HTML_PAGE_HPP

#include <string>

namespace lowalloc::report::page {

const std::string& html();
const std::string& css();
const std::string& js();

}  // namespace lowalloc::report::page

#endif
