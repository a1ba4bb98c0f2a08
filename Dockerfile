# syntax=docker/dockerfile:1
# Shiftwork: build with the Swift toolchain image, run on a slim Debian with only the runtime libraries.
# The toolchain the project is built and tested with (Swift 6.3).
ARG SWIFT_VERSION=6.3

FROM swift:${SWIFT_VERSION}-bookworm AS build
# The -dev packages of scripts/setup that the build needs: headers (libcurl's and OpenSSL's libcrypto for CCurl,
# libavif's, libmicrohttpd's, though those three are opened on first use, not linked) and the linked libraries.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libzmq3-dev libprotobuf-c-dev libjpeg62-turbo-dev libpng-dev libisal-dev liblcms2-dev libwebp-dev libavif-dev libtiff-dev libgif-dev libheif-dev libcurl4-openssl-dev libssl-dev libmicrohttpd-dev pkg-config \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# Resolve dependencies in their own layer so source edits do not refetch them.
COPY Package.swift ./
RUN swift package resolve
COPY Sources ./Sources
COPY Benchmarks ./Benchmarks
COPY proto ./proto
# The manifest names the test targets, whose folders must exist; the build of `shiftwork` reads none of their
# files. Empty folders instead of Tests/, so that a change to a test does not rebuild the image (layer cache).
RUN sed -n -e 's/.*name: "\([A-Za-z0-9_]*Tests\)".*/Tests\/\1/p' -e 's/.*path: "\(Tests\/[^"]*\)".*/\1/p' Package.swift \
  | xargs mkdir -p
# Stripped: 65.5 MB instead of 96 MB (docs/benchmarks.md, "Container image").
RUN swift build -c release --product shiftwork --static-swift-stdlib \
 && install -D --strip "$(swift build -c release --show-bin-path)/shiftwork" /out/shiftwork

FROM debian:bookworm-slim AS runtime
# libcurl4 with libssl3 (downloads, S3), libavif15 (AVIF), libheif1 (HEIC), libtiff6 (TIFF) and libmicrohttpd12 (HTTP endpoints) are opened on first
# use (dlopen), not linked: `ldd shiftwork` does not list them, but the features need them installed.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libzmq5 libprotobuf-c1 libjpeg62-turbo libpng16-16 libisal2 liblcms2-2 libwebp7 libwebpmux3 libwebpdemux2 libavif15 libtiff6 libgif7 libheif1 libcurl4 libssl3 libmicrohttpd12 libstdc++6 ca-certificates tini \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home-dir /var/lib/shiftwork --create-home shiftwork
COPY --from=build /out/shiftwork /usr/local/bin/shiftwork
USER shiftwork
WORKDIR /var/lib/shiftwork
# In a container the default coordinator (tcp://127.0.0.1:5570) is the container itself: a worker without
# SHIFTWORK_COORDINATOR (or --coordinator) exits at once, naming the variable, instead of waiting for ever.
ENV SHIFTWORK_REQUIRE_COORDINATOR=1
EXPOSE 5570
# tini forwards SIGTERM so that `docker compose stop` drains workers gracefully.
ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/shiftwork"]
CMD ["--help"]
