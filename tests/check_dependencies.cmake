# The test suite's first step (CTest fixture "dependencies"): every external
# program, Python module and data set a test calls must be present, or the
# run stops here naming the Debian package that provides it. Nothing a test
# needs is optional: scripts/install-deps.sh installs all of it.
#   cmake -DORT_MODULES=<dir with onnxruntime-node> -P check_dependencies.cmake

cmake_minimum_required(VERSION 3.25)

set(missing "")

# name=Debian package
set(programs /usr/bin/python3=python3 xvfb-run=xvfb xauth=xauth node=nodejs c++=g++ cmake=cmake
             dpkg-shlibdeps=dpkg-dev desktop-file-validate=desktop-file-utils appstreamcli=appstream
             update-mime-database=shared-mime-info)
foreach(entry IN LISTS programs)
  string(REPLACE "=" ";" pair "${entry}")
  list(GET pair 0 name)
  list(GET pair 1 package)
  unset(found)
  find_program(found NAMES ${name} NO_CACHE)
  if(NOT found)
    list(APPEND missing "program ${name} (apt-get install ${package})")
  endif()
endforeach()

# Python modules for /usr/bin/python3 (model export, generated code, checks),
# tried in one interpreter: it prints the modules that fail to import.
set(modules torch=python3-torch torchvision=python3-torchvision onnx=python3-onnx numpy=python3-numpy
            pyflakes=python3-pyflakes)
set(names "")
foreach(entry IN LISTS modules)
  string(REPLACE "=" ";" pair "${entry}")
  list(GET pair 0 module)
  list(APPEND names ${module})
endforeach()
string(REPLACE ";" " " names "${names}")
set(failed "${names}")
if(EXISTS /usr/bin/python3)
  execute_process(
    COMMAND /usr/bin/python3 -c
      "import importlib, sys\nfor m in sys.argv[1].split():\n    try: importlib.import_module(m)\n    except Exception: print(m)"
      "${names}"
    OUTPUT_VARIABLE failed ERROR_QUIET)
endif()
string(REGEX REPLACE "[ \n]+" ";" failed "${failed}")
foreach(entry IN LISTS modules)
  string(REPLACE "=" ";" pair "${entry}")
  list(GET pair 0 module)
  list(GET pair 1 package)
  if(module IN_LIST failed)
    list(APPEND missing "Python module ${module} for /usr/bin/python3 (apt-get install ${package})")
  endif()
endforeach()

if(NOT IS_DIRECTORY /usr/share/libonnx-testdata/data/node)
  list(APPEND missing "ONNX conformance data /usr/share/libonnx-testdata (apt-get install libonnx-testdata)")
endif()
if(NOT ORT_MODULES OR NOT IS_DIRECTORY "${ORT_MODULES}/onnxruntime-node")
  list(APPEND missing "ONNX Runtime for Node.js in ${ORT_MODULES} (scripts/test.sh installs the npm package onnxruntime-node)")
endif()

if(missing)
  list(LENGTH missing count)
  foreach(m IN LISTS missing)
    message("missing: ${m}")
  endforeach()
  message(FATAL_ERROR "${count} test dependencies are missing: run scripts/install-deps.sh (as root) and scripts/test.sh")
endif()
message("test dependencies: all present")
