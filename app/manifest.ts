import type { MetadataRoute } from "next";

/**
 * The web manifest (/manifest.webmanifest): the console's name, colours and icons (public/, made
 * from app/icon.svg by scripts/make-icons.mjs) when a phone adds it to its home screen. The colours
 * are the light theme's background and brand (app/globals.css).
 */
export default function manifest(): MetadataRoute.Manifest {
  return {
    name: "Onceboard",
    short_name: "Onceboard",
    description: "Whether your background jobs are safe to run twice.",
    start_url: "/overview",
    scope: "/",
    display: "standalone",
    background_color: "#f5f6f8",
    theme_color: "#3557d6",
    icons: [
      { src: "/icon.svg", sizes: "any", type: "image/svg+xml" },
      { src: "/icon-192.png", sizes: "192x192", type: "image/png" },
      { src: "/icon-512.png", sizes: "512x512", type: "image/png" },
    ],
  };
}
