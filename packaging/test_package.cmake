# The CTest test `package` (label `package`; docs/testing.md): builds the Debian
# package with CPack in the build tree, unpacks it into a scratch root with
# `dpkg -x`, and checks what a user would get: the control fields, the exact list
# of files, stripped binaries with $ORIGIN-relative RPATHs, the unpacked `ramiel`
# and `ramiel-studio` running from the scratch root on its own libraries and
# runtime module (no LD_LIBRARY_PATH), the icons' sizes, the man pages, and the
# launcher, MIME type and AppStream metadata through their validators.
#   cmake -DCPACK=<cpack> -DBUILD_DIR=<build> -DSOURCE_DIR=<source> -DWORK_DIR=<scratch>
#         -DVERSION=<x.y.z> -DLIBDIR=<RAMIEL_INSTALL_LIBDIR> -DAPPSTREAM_ID=<id> -DICON_SIZES=<16;...>
#         -P test_package.cmake

cmake_minimum_required(VERSION 3.25)

# Every check runs; the failures are listed and counted at the end.
function(fail what)
  message("FAIL: ${what}")
  set_property(GLOBAL APPEND PROPERTY package_failures "${what}")
endfunction()

# What the test runs (program=Debian package); a missing one fails naming its package.
set(missing "")
foreach(entry dpkg-deb=dpkg dpkg-shlibdeps=dpkg-dev desktop-file-validate=desktop-file-utils
              appstreamcli=appstream update-mime-database=shared-mime-info readelf=binutils gzip=gzip)
  string(REPLACE "=" ";" pair "${entry}")
  list(GET pair 0 tool)
  list(GET pair 1 package)
  string(MAKE_C_IDENTIFIER "${tool}" var)
  find_program(${var} ${tool} NO_CACHE)
  if(NOT ${var})
    list(APPEND missing "${tool} (apt-get install ${package})")
  endif()
endforeach()
if(missing)
  message(FATAL_ERROR "missing: ${missing}; run scripts/install-deps.sh as root")
endif()

# No library path from the caller: the unpacked programs must find their own.
unset(ENV{LD_LIBRARY_PATH})
unset(ENV{RAMIEL_RUNTIME_LIBRARY})
set(ENV{RAMIEL_CACHE_DIR} "${WORK_DIR}/cache")
set(ENV{HOME} "${WORK_DIR}/home")
set(ENV{XDG_CONFIG_HOME} "${WORK_DIR}/home/.config")
set(ENV{QT_QPA_PLATFORM} offscreen)
set(ENV{LC_ALL} C.UTF-8)

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}/home")
set(root "${WORK_DIR}/root")

# --- Build it ------------------------------------------------------------------------
string(TIMESTAMP start "%s")
execute_process(COMMAND ${CPACK} -G DEB --config ${BUILD_DIR}/CPackConfig.cmake -B ${WORK_DIR}/cpack
                WORKING_DIRECTORY ${BUILD_DIR} OUTPUT_VARIABLE out ERROR_VARIABLE out RESULT_VARIABLE rc)
string(TIMESTAMP end "%s")
math(EXPR seconds "${end} - ${start}")
file(GLOB debs "${WORK_DIR}/cpack/*.deb")
list(LENGTH debs count)
if(NOT rc EQUAL 0 OR NOT count EQUAL 1)
  message("${out}")
  message(FATAL_ERROR "cpack -G DEB failed (exit ${rc}, ${count} .deb files)")
endif()
file(SIZE "${debs}" size)
math(EXPR kib "${size} / 1024")
message("built ${debs} (${kib} KiB) in ${seconds} s")
if(NOT debs MATCHES "/ramiel_${VERSION}_[a-z0-9]+\\.deb$")
  fail("package file name ${debs} (expected ramiel_${VERSION}_<arch>.deb)")
endif()

# --- Control fields --------------------------------------------------------------------
function(field name out)
  execute_process(COMMAND dpkg-deb --field ${debs} ${name} OUTPUT_VARIABLE value
                  OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
  set(${out} "${value}" PARENT_SCOPE)
endfunction()
field(Package package)
field(Version version)
field(Depends depends)
field(Recommends recommends)
message("Depends: ${depends}")
if(NOT package STREQUAL "ramiel")
  fail("Package is '${package}'")
endif()
if(NOT version STREQUAL VERSION)
  fail("Version is '${version}', the project's is ${VERSION}")
endif()
# Derived by dpkg-shlibdeps from the binaries: libtorch, Qt, Graphviz, ONNX, protobuf, and
# LLVM's OpenMP runtime, which the programs link ahead of libgomp.
foreach(library libtorch libqt6widgets6 libqt6svg6 libgvc6 libonnx libprotobuf libc6 libomp5)
  if(NOT depends MATCHES "(^|, )${library}[^,]*")
    fail("Depends lacks ${library}: ${depends}")
  endif()
endforeach()
if(NOT recommends STREQUAL "python3-torch, python3-numpy")
  fail("Recommends is '${recommends}'")
endif()

# --- Files: exactly these ----------------------------------------------------------------
set(expected
  ./usr/bin/ramiel
  ./usr/bin/ramiel-studio
  ./usr/${LIBDIR}/libramiel_core.so
  ./usr/${LIBDIR}/libramiel_runtime.so
  ./usr/share/applications/ramiel-studio.desktop
  ./usr/share/doc/ramiel/changelog.gz
  ./usr/share/doc/ramiel/copyright
  ./usr/share/icons/hicolor/scalable/apps/ramiel-studio.svg
  ./usr/share/man/man1/ramiel-studio.1.gz
  ./usr/share/man/man1/ramiel.1.gz
  ./usr/share/metainfo/${APPSTREAM_ID}.metainfo.xml
  ./usr/share/mime/packages/ramiel-onnx.xml
  ./usr/share/ramiel/models/inception_sample.onnx)
foreach(size IN LISTS ICON_SIZES)
  list(APPEND expected ./usr/share/icons/hicolor/${size}x${size}/apps/ramiel-studio.png)
endforeach()
list(SORT expected)
execute_process(COMMAND dpkg-deb --contents ${debs} OUTPUT_VARIABLE listing COMMAND_ERROR_IS_FATAL ANY)
string(REGEX MATCHALL "[^\n]*\n" entries "${listing}")
set(files "")
foreach(entry IN LISTS entries)
  if(entry MATCHES "^([-d])([-rwx]+) root/root +[0-9]+ [-0-9]+ [0-9:]+ (\\./[^\n]*)\n$")
    if(CMAKE_MATCH_1 STREQUAL "-")
      list(APPEND files "${CMAKE_MATCH_3}")
      if(NOT CMAKE_MATCH_2 MATCHES "^rw[x-]r-[x-]r-[x-]$")
        fail("mode ${CMAKE_MATCH_1}${CMAKE_MATCH_2} of ${CMAKE_MATCH_3}")
      endif()
    elseif(NOT CMAKE_MATCH_2 STREQUAL "rwxr-xr-x")
      fail("mode ${CMAKE_MATCH_1}${CMAKE_MATCH_2} of ${CMAKE_MATCH_3}")
    endif()
  else()
    fail("unexpected entry (not a root-owned file or folder): ${entry}")
  endif()
endforeach()
list(SORT files)
if(NOT files STREQUAL expected)
  set(extra ${files})
  list(REMOVE_ITEM extra ${expected})
  set(lacking ${expected})
  list(REMOVE_ITEM lacking ${files})
  fail("files differ: extra [${extra}], missing [${lacking}]")
endif()

execute_process(COMMAND dpkg-deb -x ${debs} ${root} COMMAND_ERROR_IS_FATAL ANY)

# --- Binaries: stripped, RPATHs relative to $ORIGIN ---------------------------------------
foreach(binary usr/bin/ramiel usr/bin/ramiel-studio usr/${LIBDIR}/libramiel_core.so usr/${LIBDIR}/libramiel_runtime.so)
  execute_process(COMMAND readelf --wide --section-headers --dynamic ${root}/${binary}
                  OUTPUT_VARIABLE elf COMMAND_ERROR_IS_FATAL ANY)
  if(elf MATCHES "\\.debug_|\\.symtab")
    fail("${binary} is not stripped")
  endif()
  string(REGEX MATCHALL "\\((RPATH|RUNPATH)\\)[^\n]*\\[[^\n]*\\]" paths "${elf}")
  foreach(path IN LISTS paths)
    string(REGEX REPLACE ".*\\[(.*)\\]" "\\1" path "${path}")
    string(REPLACE ":" ";" path "${path}")
    foreach(p IN LISTS path)
      if(NOT p MATCHES "^\\$ORIGIN(/|$)")
        fail("${binary} has the library search path ${p} (only \$ORIGIN-relative ones)")
      endif()
    endforeach()
  endforeach()
endforeach()

# --- The unpacked programs run on the unpacked libraries ------------------------------------
# Which libraries a run loaded (the loader's own log): Ramiel's must be the scratch root's.
function(check_loaded what log)
  foreach(library ${ARGN})
    string(REGEX MATCH "calling init: ([^\n]*/${library})\n" line "${log}")
    set(path "${CMAKE_MATCH_1}")
    if(NOT path)
      fail("${what}: ${library} was not loaded")
      continue()
    endif()
    file(REAL_PATH "${path}" real)
    if(NOT real STREQUAL "${root}/usr/${LIBDIR}/${library}")
      fail("${what} loaded ${path}, not the package's ${library}")
    endif()
  endforeach()
endfunction()

execute_process(COMMAND ${CMAKE_COMMAND} -E env LD_DEBUG=files ${root}/usr/bin/ramiel --version
                OUTPUT_VARIABLE out ERROR_VARIABLE log RESULT_VARIABLE rc)
message("ramiel --version:\n${out}")
string(REPLACE "\n" ";" lines "${out}")
list(GET lines 0 first)
if(NOT rc EQUAL 0 OR NOT first STREQUAL "ramiel ${VERSION}")
  fail("ramiel --version (exit ${rc}): ${out}")
endif()
if(NOT out MATCHES "\nONNX [0-9.]+, Graphviz [0-9.]+, libtorch [0-9.]+, OpenMP libomp\\.so\\.[0-9]+\n")
  fail("ramiel --version names no library versions: ${out}")
endif()
check_loaded("ramiel --version" "${log}" libramiel_core.so libramiel_runtime.so)

execute_process(
  COMMAND ${root}/usr/bin/ramiel info ${root}/usr/share/ramiel/models/inception_sample.onnx
          --machine ${SOURCE_DIR}/tests/data/machine.json
  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT out MATCHES "74 nodes as read" OR NOT out MATCHES "graph +40 nodes, 45 edges"
   OR NOT out MATCHES "critical path +16 nodes")
  fail("ramiel info on the packaged sample (exit ${rc}): ${out}${err}")
endif()

execute_process(COMMAND ${root}/usr/bin/ramiel-studio --version OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT out STREQUAL "Ramiel Studio ${VERSION}\n")
  fail("ramiel-studio --version (exit ${rc}): ${out}${err}")
endif()
# First start, no model given: Studio opens the sample installed beside it.
execute_process(COMMAND ${CMAKE_COMMAND} -E env LD_DEBUG=files
                        ${root}/usr/bin/ramiel-studio --screenshot ${WORK_DIR}/studio.png
                TIMEOUT 120 OUTPUT_VARIABLE out ERROR_VARIABLE log RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT EXISTS ${WORK_DIR}/studio.png)
  string(REGEX REPLACE "[ \t]*[0-9]+:[^\n]*\n" "" err "${log}")
  fail("ramiel-studio --screenshot (exit ${rc}): ${err}")
endif()
check_loaded("ramiel-studio" "${log}" libramiel_core.so)
if(NOT log MATCHES "ramiel-studio: wrote ")
  fail("ramiel-studio did not write its screenshot")
endif()

# --- Desktop integration -------------------------------------------------------------------
set(desktop ${root}/usr/share/applications/ramiel-studio.desktop)
execute_process(COMMAND desktop-file-validate ${desktop} OUTPUT_VARIABLE out ERROR_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT out STREQUAL "")
  fail("desktop-file-validate (exit ${rc}): ${out}")
endif()
file(STRINGS ${desktop} lines)
foreach(line "Exec=ramiel-studio %f" "MimeType=application/x-onnx;" "Icon=ramiel-studio")
  if(NOT line IN_LIST lines)
    fail("the desktop entry lacks '${line}'")
  endif()
endforeach()

# The MIME type compiles into a database that maps *.onnx to application/x-onnx.
execute_process(COMMAND update-mime-database ${root}/usr/share/mime OUTPUT_VARIABLE out ERROR_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT EXISTS ${root}/usr/share/mime/application/x-onnx.xml)
  fail("update-mime-database (exit ${rc}): ${out}")
else()
  file(STRINGS ${root}/usr/share/mime/globs2 globs REGEX "application/x-onnx")
  if(NOT globs MATCHES "application/x-onnx:\\*\\.onnx")
    fail("no *.onnx glob for application/x-onnx: ${globs}")
  endif()
endif()

set(metainfo ${root}/usr/share/metainfo/${APPSTREAM_ID}.metainfo.xml)
execute_process(COMMAND appstreamcli validate --no-net ${metainfo} OUTPUT_VARIABLE out ERROR_VARIABLE out RESULT_VARIABLE rc)
message("appstreamcli validate: ${out}")
if(NOT rc EQUAL 0)
  fail("appstreamcli validate --no-net (exit ${rc}): ${out}")
endif()
file(READ ${metainfo} xml)
if(NOT xml MATCHES "<release version=\"${VERSION}\" date=\"[0-9]+-[0-9]+-[0-9]+\"/>")
  fail("the metainfo has no release entry for ${VERSION}")
endif()
if(NOT xml MATCHES "<launchable type=\"desktop-id\">ramiel-studio.desktop</launchable>")
  fail("the metainfo does not name the desktop entry")
endif()

# Icons: each PNG is the size its folder says (width and height from the IHDR chunk).
foreach(size IN LISTS ICON_SIZES)
  set(png ${root}/usr/share/icons/hicolor/${size}x${size}/apps/ramiel-studio.png)
  file(READ ${png} header LIMIT 24 HEX)
  math(EXPR hex "${size}" OUTPUT_FORMAT HEXADECIMAL)
  string(REGEX REPLACE "^0x" "" hex "${hex}")
  string(LENGTH "${hex}" n)
  math(EXPR pad "8 - ${n}")
  string(REPEAT "0" ${pad} zeros)
  set(dim "${zeros}${hex}")
  if(NOT header STREQUAL "89504e470d0a1a0a0000000d49484452${dim}${dim}")
    fail("${png} is not a ${size}x${size} PNG")
  endif()
endforeach()

# --- Man pages: gzip-compressed roff for this version --------------------------------------
foreach(program ramiel ramiel-studio)
  execute_process(COMMAND gzip -dc ${root}/usr/share/man/man1/${program}.1.gz OUTPUT_VARIABLE page RESULT_VARIABLE rc)
  string(TOUPPER "${program}" title)
  if(NOT rc EQUAL 0 OR NOT page MATCHES "\n\\.TH ${title} \"1\" \"[^\"]+\" \"${program} ${VERSION}\"")
    fail("${program}.1.gz is not a man page for ${program} ${VERSION}")
  endif()
  if(program STREQUAL "ramiel")
    foreach(command info cluster run export)
      if(NOT page MATCHES "\n\\.SS \"ramiel ${command}\"\n")
        fail("ramiel.1 does not describe 'ramiel ${command}'")
      endif()
    endforeach()
  endif()
endforeach()

get_property(failures GLOBAL PROPERTY package_failures)
if(failures)
  list(LENGTH failures count)
  message(FATAL_ERROR "${count} package checks failed")
endif()
message("package: all checks passed")
