# Writes a program's gzip-compressed man page from its own --help (help2man), so
# the page cannot drift from the program. For `ramiel`, each subcommand's --help
# becomes a COMMANDS section (the subcommands are read from the top-level --help).
#   cmake -DPROGRAM=<path> -DNAME=<one-line description> -DVERSION=<x.y.z>
#         -DINCLUDE=<extra sections, help2man's format> -DOUTPUT=<page.1.gz>
#         -DHELP2MAN=<path> -DGZIP=<path> -DEPOCH=<release date, seconds> [-DSUBCOMMANDS=ON]
#         -P manpage.cmake

cmake_minimum_required(VERSION 3.25)

get_filename_component(dir "${PROGRAM}" DIRECTORY)
get_filename_component(program "${PROGRAM}" NAME)
get_filename_component(outDir "${OUTPUT}" DIRECTORY)
string(REGEX REPLACE "\\.gz$" "" page "${OUTPUT}")
file(MAKE_DIRECTORY "${outDir}")

# Run by name, so the usage lines say "ramiel-studio", not the build tree's path
# (Qt prints argv[0]). Studio's --help needs no display.
set(ENV{PATH} "${dir}:$ENV{PATH}")
set(ENV{QT_QPA_PLATFORM} offscreen)
# The page's date is the release's, not the build's (reproducible pages).
set(ENV{SOURCE_DATE_EPOCH} "${EPOCH}")
set(ENV{LC_ALL} C.UTF-8)

# Text for roff: backslashes escaped, hyphens as minus signs (they are option
# dashes here), no control character at the start of a line.
function(roff out text)
  string(REPLACE "\\" "\\e" text "${text}")
  string(REPLACE "-" "\\-" text "${text}")
  if(text MATCHES "^[.']")
    set(text "\\&${text}")
  endif()
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

file(READ "${INCLUDE}" sections)
if(SUBCOMMANDS)
  execute_process(COMMAND ${program} --help OUTPUT_VARIABLE help RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${program} --help failed (${rc})")
  endif()
  # CLI11's layout: a "Subcommands:" block of "  name   description" lines.
  string(REGEX MATCH "\nSubcommands:\n(  [^\n]+\n)+" block "${help}")
  string(REGEX MATCHALL "\n  [a-z][a-z-]*" commands "${block}")
  list(TRANSFORM commands REPLACE "\n  " "")
  if(NOT commands)
    message(FATAL_ERROR "no subcommands found in `${program} --help`")
  endif()
  string(APPEND sections "\n[COMMANDS]\n")
  foreach(command IN LISTS commands)
    execute_process(COMMAND ${program} ${command} --help OUTPUT_VARIABLE help RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "${program} ${command} --help failed (${rc})")
    endif()
    string(APPEND sections ".SS \"${program} ${command}\"\n")
    # Lines: the description, "Usage: ...", "Positionals:"/"Options:" headings,
    # "  spec   description" entries (a long spec puts its description on the
    # next, deeper-indented line), and the footer shared with the top-level help.
    # (Line by line without CMake lists, which split badly at unbalanced brackets.)
    while(NOT help STREQUAL "")
      string(FIND "${help}" "\n" end)
      if(end EQUAL -1)
        set(line "${help}")
        set(help "")
      else()
        string(SUBSTRING "${help}" 0 ${end} line)
        math(EXPR end "${end} + 1")
        string(SUBSTRING "${help}" ${end} -1 help)
      endif()
      if(line STREQUAL "" OR line MATCHES "^Run '${program} COMMAND --help'")
        continue()
      elseif(line MATCHES "^(Positionals|Options):$")
        continue()
      elseif(line MATCHES "^Usage: (.*)$")
        roff(text "${CMAKE_MATCH_1}")
        string(APPEND sections ".PP\n\\fBUsage:\\fR ${text}\n")
      elseif(line MATCHES "^  ([^ ].*[^ ])  +([^ ].*)$")
        roff(spec "${CMAKE_MATCH_1}")
        roff(text "${CMAKE_MATCH_2}")
        string(APPEND sections ".TP\n\\fB${spec}\\fR\n${text}\n")
      elseif(line MATCHES "^  ([^ ].*)$")
        roff(spec "${CMAKE_MATCH_1}")
        string(APPEND sections ".TP\n\\fB${spec}\\fR\n")
      elseif(line MATCHES "^   +([^ ].*)$")
        roff(text "${CMAKE_MATCH_1}")
        string(APPEND sections "${text}\n")
      else()
        roff(text "${line}")
        string(APPEND sections "${text}\n")
      endif()
    endwhile()
  endforeach()
endif()
set(include "${page}.h2m")
file(WRITE "${include}" "${sections}")

execute_process(
  COMMAND ${HELP2MAN} --no-info --section=1 --name=${NAME}
          --version-string=${VERSION} --include=${include} --output=${page} ${program}
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "help2man failed for ${program} (${rc})")
endif()
file(REMOVE "${OUTPUT}")
execute_process(COMMAND ${GZIP} -9n "${page}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gzip failed on ${page} (${rc})")
endif()
