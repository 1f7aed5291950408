# Desktop integration, man pages and the Debian package (packaging/README.md).
# Included at the end of the top-level CMakeLists.txt, after the targets: the
# man pages run `ramiel` and `ramiel-studio`, the package holds everything
# `cmake --install` installs. `cpack -G DEB` in the build tree (or
# scripts/package.sh) builds the package; the CTest test `package` checks it.

set(RAMIEL_APPSTREAM_ID "org.ramiel.Studio" CACHE STRING
  "Ramiel Studio's AppStream component id (reverse DNS; must not change once published)")
set(RAMIEL_SCREENSHOT_URL "" CACHE STRING
  "https URL of docs/images/studio-inception_v3.png as published; AppStream accepts only web URLs, so empty leaves the screenshot out")
set(RAMIEL_PACKAGE_MAINTAINER "Ramiel maintainers <maintainers@users.noreply.a-seed-b06dbccc.example>" CACHE STRING
  "The Debian package's Maintainer")

# Tools for the generated files: name=Debian package.
foreach(entry help2man=help2man rsvg-convert=librsvg2-bin gzip=gzip date=coreutils)
  string(REPLACE "=" ";" pair "${entry}")
  list(GET pair 0 tool)
  list(GET pair 1 package)
  string(MAKE_C_IDENTIFIER "RAMIEL_${tool}" var)
  string(TOUPPER "${var}" var)
  find_program(${var} ${tool})
  if(NOT ${var})
    message(FATAL_ERROR "${tool} is missing (apt-get install ${package}, or run scripts/install-deps.sh as root): "
                        "the man pages and icons are made with it")
  endif()
endforeach()

# The release date (top-level CMakeLists.txt) as the Debian changelog wants it, and
# as the seconds that date the man pages.
foreach(format "-R" "+%s")
  execute_process(COMMAND ${RAMIEL_DATE} -u -d "${RAMIEL_RELEASE_DATE} 00:00" ${format}
                  OUTPUT_VARIABLE out OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
  list(APPEND releaseDates "${out}")
endforeach()
list(GET releaseDates 0 RAMIEL_RELEASE_RFC2822)
list(GET releaseDates 1 RAMIEL_RELEASE_EPOCH)

set(pkgSource ${CMAKE_CURRENT_LIST_DIR})
set(pkgBinary ${CMAKE_BINARY_DIR}/packaging)
set(generated "")
set(docDir ${CMAKE_INSTALL_DATADIR}/doc/ramiel)

# --- Ramiel Studio: launcher, MIME type, icons, AppStream metadata ---------------
if(TARGET ramiel-studio)
  install(FILES ${pkgSource}/ramiel-studio.desktop DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
  install(FILES ${pkgSource}/ramiel-onnx.xml DESTINATION ${CMAKE_INSTALL_DATADIR}/mime/packages)

  # The icon: the hand-drawn SVG, and PNGs rendered from it for the sizes icon themes use.
  set(RAMIEL_ICON_SIZES 16 22 24 32 48 64 128 256)
  install(FILES ${pkgSource}/ramiel-studio.svg DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps)
  foreach(size IN LISTS RAMIEL_ICON_SIZES)
    set(png ${pkgBinary}/icons/${size}x${size}/ramiel-studio.png)
    add_custom_command(OUTPUT ${png}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${pkgBinary}/icons/${size}x${size}
      COMMAND ${RAMIEL_RSVG_CONVERT} --width=${size} --height=${size} --output=${png} ${pkgSource}/ramiel-studio.svg
      DEPENDS ${pkgSource}/ramiel-studio.svg
      COMMENT "Rendering the ${size}x${size} icon"
      VERBATIM)
    list(APPEND generated ${png})
    install(FILES ${png} DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/${size}x${size}/apps)
  endforeach()

  if(RAMIEL_SCREENSHOT_URL)
    set(RAMIEL_METAINFO_SCREENSHOTS "<screenshots>
    <screenshot type=\"default\">
      <caption>Inception-v3 colored by cluster, with its critical path, metrics, Gantt chart and cluster loads</caption>
      <image>${RAMIEL_SCREENSHOT_URL}</image>
    </screenshot>
  </screenshots>")
  else()
    set(RAMIEL_METAINFO_SCREENSHOTS "<!-- No screenshot: AppStream takes only an http(s) URL for one; configure with
       -DRAMIEL_SCREENSHOT_URL=<where docs/images/studio-inception_v3.png is published>. -->")
  endif()
  set(RAMIEL_METAINFO ${pkgBinary}/${RAMIEL_APPSTREAM_ID}.metainfo.xml)
  configure_file(${pkgSource}/ramiel-studio.metainfo.xml.in ${RAMIEL_METAINFO} @ONLY)
  install(FILES ${RAMIEL_METAINFO} DESTINATION ${CMAKE_INSTALL_DATADIR}/metainfo)
endif()

# --- Man pages, from each program's own --help -------------------------------------
function(ramiel_man_page target description)
  set(page ${pkgBinary}/man/${target}.1.gz)
  add_custom_command(OUTPUT ${page}
    COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:${target}> -DNAME=${description} -DVERSION=${PROJECT_VERSION}
            -DINCLUDE=${pkgSource}/${target}.h2m -DOUTPUT=${page} -DHELP2MAN=${RAMIEL_HELP2MAN} -DGZIP=${RAMIEL_GZIP}
            -DEPOCH=${RAMIEL_RELEASE_EPOCH} ${ARGN} -P ${pkgSource}/manpage.cmake
    DEPENDS ${target} ${pkgSource}/manpage.cmake ${pkgSource}/${target}.h2m
    COMMENT "Writing the man page of ${target} from its --help"
    VERBATIM)
  set(generated ${generated} ${page} PARENT_SCOPE)
  install(FILES ${page} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endfunction()
if(TARGET ramiel)
  ramiel_man_page(ramiel "find and exploit the task parallelism in ONNX dataflow graphs" -DSUBCOMMANDS=ON)
endif()
if(TARGET ramiel-studio)
  ramiel_man_page(ramiel-studio "see and exploit the task parallelism of ONNX models")
endif()

# --- Debian package documentation: copyright and changelog ---------------------------
configure_file(${pkgSource}/changelog.in ${pkgBinary}/changelog @ONLY)
add_custom_command(OUTPUT ${pkgBinary}/changelog.gz
  COMMAND ${RAMIEL_GZIP} -9nkf ${pkgBinary}/changelog
  DEPENDS ${pkgBinary}/changelog
  VERBATIM)
list(APPEND generated ${pkgBinary}/changelog.gz)
install(FILES ${pkgSource}/copyright ${pkgBinary}/changelog.gz DESTINATION ${docDir})

add_custom_target(ramiel_packaging ALL DEPENDS ${generated})

# --- The Debian package: cpack -G DEB -------------------------------------------------
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME ramiel)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${RAMIEL_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "task parallelism in ONNX dataflow graphs on CPU multicores")
set(CPACK_PACKAGE_DESCRIPTION
"Ramiel opens an ONNX model and finds the task parallelism in its dataflow
graph: the independent branches that can run at the same time on different
CPU cores. It measures how much parallelism there is (work, span, critical
path), clusters the graph with critical-path-based linear clustering, runs it
on libtorch serially and in parallel, and generates readable parallel PyTorch
and C++ code.

This package holds the command-line tool ramiel and the desktop app Ramiel
Studio.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_COMPRESSION_TYPE xz)
# Dependencies from dpkg-shlibdeps on the binaries, not written by hand. (Qt's xcb and
# offscreen platform plugins, loaded at run time, come with libqt6gui6.)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# `ramiel export` writes Python that imports torch and numpy, and C++ that builds
# with CMake against libtorch.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3-torch, python3-numpy")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "libtorch-dev, cmake, g++")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS
  OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
set(CPACK_SOURCE_GENERATOR "")
include(CPack)

# --- The test: build the package, unpack it, run and validate what it installs -------
if(RAMIEL_BUILD_TESTS AND TARGET ramiel AND TARGET ramiel-studio)
  add_test(NAME package
    COMMAND ${CMAKE_COMMAND}
            -DCPACK=${CMAKE_CPACK_COMMAND} -DBUILD_DIR=${CMAKE_BINARY_DIR} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
            -DWORK_DIR=${CMAKE_BINARY_DIR}/package-test -DVERSION=${PROJECT_VERSION}
            -DLIBDIR=${RAMIEL_INSTALL_LIBDIR} -DAPPSTREAM_ID=${RAMIEL_APPSTREAM_ID}
            "-DICON_SIZES=${RAMIEL_ICON_SIZES}" -P ${pkgSource}/test_package.cmake)
  set_tests_properties(package PROPERTIES LABELS package TIMEOUT 600)
endif()
