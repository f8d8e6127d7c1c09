# The Python module (python/): pybind11 and numpy from Debian (python3-pybind11, pybind11-dev,
# python3-numpy, python3-dev), built for Debian's own interpreter, whose packages they are.
#
# RULESTREAM_PYTHON: AUTO (the default) builds the module when pybind11 and numpy are found and
# says why not otherwise; ON requires them (CI: a missing package fails the configure rather
# than skipping the module and its tests); OFF never builds it.
set(RULESTREAM_PYTHON AUTO CACHE STRING "Build the Python module: AUTO, ON (required) or OFF")
set_property(CACHE RULESTREAM_PYTHON PROPERTY STRINGS AUTO ON OFF)
# Debian's pybind11 and numpy are installed for /usr/bin/python3; a python3 found first on PATH
# (pyenv, a virtualenv) may lack them. Point this elsewhere to build for another interpreter.
set(RULESTREAM_PYTHON_EXECUTABLE /usr/bin/python3
    CACHE FILEPATH "The Python interpreter the module is built for and tested with")

set(RULESTREAM_WITH_PYTHON OFF)
if(RULESTREAM_SANITIZE AND RULESTREAM_PYTHON STREQUAL "AUTO")
  # The interpreter is not built with the sanitizers: an instrumented module cannot be loaded
  # into it without preloading their runtimes, and CPython's own allocations read as leaks.
  message(STATUS "rulestream: Python module not built under RULESTREAM_SANITIZE")
elseif(NOT RULESTREAM_PYTHON STREQUAL "OFF")
  set(python_missing "")
  if(NOT EXISTS ${RULESTREAM_PYTHON_EXECUTABLE})
    set(python_missing "${RULESTREAM_PYTHON_EXECUTABLE} does not exist")
  else()
    set(Python_EXECUTABLE ${RULESTREAM_PYTHON_EXECUTABLE})
    set(PYBIND11_FINDPYTHON ON)
    find_package(Python 3 COMPONENTS Interpreter Development.Module)
    find_package(pybind11 2.10 CONFIG)
    execute_process(COMMAND ${RULESTREAM_PYTHON_EXECUTABLE} -c "import numpy"
                    RESULT_VARIABLE numpy_status OUTPUT_QUIET ERROR_QUIET)
    if(NOT Python_Development.Module_FOUND)
      set(python_missing "Python's headers (python3-dev)")
    elseif(NOT pybind11_FOUND)
      set(python_missing "pybind11 (pybind11-dev, python3-pybind11)")
    elseif(NOT numpy_status EQUAL 0)
      set(python_missing "numpy for ${RULESTREAM_PYTHON_EXECUTABLE} (python3-numpy)")
    endif()
  endif()
  if(python_missing STREQUAL "")
    set(RULESTREAM_WITH_PYTHON ON)
  elseif(RULESTREAM_PYTHON STREQUAL "ON")
    message(FATAL_ERROR "rulestream: RULESTREAM_PYTHON=ON but ${python_missing} is missing; "
                        "scripts/install-deps.sh installs it")
  else()
    message(STATUS "rulestream: Python module not built: ${python_missing} not found")
  endif()
endif()
