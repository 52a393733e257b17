# NATS peers (npm nats, @nats-io/services) against `fisk-ai-a2a serve` (pinned in
# package-lock.json; `npm ci --prefix tests/interop` installs them). Included by
# CMakeLists.txt in this directory.
if(NODE_EXECUTABLE AND TARGET fisk-ai-a2a AND TARGET fisk-demo)
  add_test(NAME interop.nats_services
    COMMAND ${NODE_EXECUTABLE} --test --test-reporter=spec ${CMAKE_CURRENT_SOURCE_DIR}/nats_services.test.mjs)
  set_tests_properties(interop.nats_services PROPERTIES
    LABELS "interop;nats" TIMEOUT 120
    ENVIRONMENT "FISK_AI_A2A=$<TARGET_FILE:fisk-ai-a2a>;FISK_DEMO=$<TARGET_FILE:fisk-demo>")
endif()
