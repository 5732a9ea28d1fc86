// Text from outside gpuwatch (process names and command lines, rule messages
// built from them, what a job says over its socket) made safe for a terminal
// or a one-line log: control characters are written out, so an ESC sequence
// cannot restyle the terminal and a newline cannot forge a log line.
#pragma once

#include <string>
#include <string_view>

namespace gpuwatch {

// `text` with \n, \r, \t written as the two characters "\n", "\r", "\t",
// other C0 controls and DEL as "\x1b" (two hex digits) and the C1 controls
// (UTF-8 U+0080..U+009F) as "\u009b". Everything else, backslashes and other
// UTF-8 included, is kept as it is.
std::string Printable(std::string_view text);

// `text` without the spaces, tabs, carriage returns and newlines at its ends.
std::string_view TrimBlanks(std::string_view text);

}  // namespace gpuwatch
