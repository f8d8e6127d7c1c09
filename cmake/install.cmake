# `cmake --install build --prefix PREFIX`: what a user of rulestream outside this tree needs.
#   PREFIX/bin/rulestream                        the command (the host of plugins)
#   PREFIX/lib/librulestream_<floor>.a           the library, floor by floor, as built here
#   PREFIX/include/rulestream/...                the public headers under their own paths, and
#   PREFIX/include/rulestream/rulestream.hpp     the umbrella header, <rulestream/rulestream.hpp>
#   PREFIX/lib/cmake/rulestream/                 find_package(rulestream): rulestream::rulestream
#                                                to link, rulestream::plugin to write a plugin
#   PREFIX/lib/python3/dist-packages/rulestream  the Python package, when it is built
#
# Static floors, not one combined library: they are what the command and the tests link, so a
# user's program runs the same code; they are built with PIC, so a user may link them into a
# shared library of their own; and a program that links them carries its rulestream, with no
# library path to set. A plugin links none of them (engine/graph/plugin_api.hpp).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The floors' PRIVATE dependencies travel with them as $<LINK_ONLY:...>, so rulestream_warnings
# (compile options only, which LINK_ONLY drops) and rulestream_proto are exported too.
install(TARGETS rulestream rulestream_plugin rulestream_warnings rulestream_proto
                ${RULESTREAM_FLOOR_TARGETS}
        EXPORT rulestream-targets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT rulestream-targets NAMESPACE rulestream::
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/rulestream)
install(TARGETS rulestream_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

foreach(header ${RULESTREAM_PUBLIC_HEADERS})
  get_filename_component(folder ${header} DIRECTORY)
  install(FILES ${PROJECT_SOURCE_DIR}/${header}
          DESTINATION ${RULESTREAM_INSTALL_INCLUDE_ROOT}/${folder})
endforeach()
install(FILES ${PROJECT_SOURCE_DIR}/include/rulestream/rulestream.hpp
        DESTINATION ${RULESTREAM_INSTALL_INCLUDE_ROOT})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/rulestream-config.cmake.in
  ${PROJECT_BINARY_DIR}/rulestream-config.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/rulestream)
# 0.x: a minor version may change the API (and kPluginAbiVersion), so only the same minor
# version is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/rulestream-config-version.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/rulestream-config.cmake
              ${PROJECT_BINARY_DIR}/rulestream-config-version.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/rulestream)

if(RULESTREAM_WITH_PYTHON)
  # Debian's python3 looks in /usr/lib/python3/dist-packages; another prefix goes on PYTHONPATH.
  install(DIRECTORY ${PROJECT_BINARY_DIR}/python/rulestream
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/python3/dist-packages
          PATTERN __pycache__ EXCLUDE)
endif()
