# Aspect's container image. Two stages: build with the Swift toolchain image, run on a
# slim Debian 12 with libvips' runtime packages only. Configure with ASPECT_* variables
# (docs/configuration.md); mount a volume on /var/cache/aspect to keep the cache.
#   docker build -t aspect .
#   docker run -p 8080:8080 -v aspect-cache:/var/cache/aspect -v /srv/photos:/srv/aspect/images:ro aspect
# No Docker engine runs on the team's machines: deploy/verify-runtime.sh checks this
# runtime stage in a Debian chroot instead (docs/operations.md).

FROM swift:6.3-bookworm AS build
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libvips-dev libcurl4-openssl-dev libxml2-dev pkg-config \
        libavformat-dev libavcodec-dev libavutil-dev libswscale-dev libseccomp-dev libdlib-dev liblapack-dev libblas-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# The Swift runtime linked in, so the runtime stage needs no toolchain; the sample images
# made here serve until a real image folder is mounted over them.
RUN swift build -c release --product aspect --static-swift-stdlib \
    && install -D "$(swift build -c release --show-bin-path)/aspect" /out/aspect \
    && /out/aspect samples /out/images

FROM debian:bookworm-slim
# The runtime packages: libvips and what it loads, libcurl and the CA certificates for
# HTTP and S3 sources, libxml2 for the SVG sanitiser, FFmpeg's libraries for video sources,
# dlib (and the LAPACK and BLAS it links) for gravity=face
# (deploy/verify-runtime.sh reads this line).
ARG RUNTIME_PACKAGES="libvips42 libcurl4 libxml2 libavformat59 libavcodec59 libavutil57 libswscale6 libseccomp2 libdlib19.1 liblapack3 libblas3 ca-certificates"
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${RUNTIME_PACKAGES} \
    && rm -rf /var/lib/apt/lists/* \
    # libdlib19.1 depends on libdlib-data, a 96 MB landmark model the face detector does not read.
    && rm -f /usr/share/dlib/shape_predictor_68_face_landmarks.dat \
    && useradd --system --uid 10001 --user-group --home-dir /srv/aspect --create-home aspect \
    && mkdir -p /var/cache/aspect \
    && chown aspect:aspect /var/cache/aspect
COPY --from=build /out/aspect /usr/local/bin/aspect
COPY --from=build /out/images /srv/aspect/images
ENV ASPECT_SERVER_HOST=0.0.0.0 \
    ASPECT_SERVER_PORT=8080 \
    ASPECT_IMAGES_ROOT=/srv/aspect/images \
    ASPECT_CACHE_DIR=/var/cache/aspect
USER aspect
WORKDIR /srv/aspect
EXPOSE 8080
VOLUME /var/cache/aspect
# SIGTERM drains: requests in flight finish (server.drainTimeoutMs), new ones are refused.
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=5s --start-period=5s --retries=3 CMD ["aspect", "healthcheck"]
ENTRYPOINT ["aspect"]
CMD ["serve"]
