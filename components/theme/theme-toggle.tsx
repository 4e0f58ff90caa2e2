"use client";

import { useSyncExternalStore } from "react";
import { THEME_STORAGE_KEY } from "./theme-script";

type Theme = "light" | "dark";
const CHANGE_EVENT = "onceboard-theme-change";
const DARK_QUERY = "(prefers-color-scheme: dark)";

function currentTheme(): Theme {
  const chosen = document.documentElement.getAttribute("data-theme");
  if (chosen === "light" || chosen === "dark") return chosen;
  return window.matchMedia(DARK_QUERY).matches ? "dark" : "light";
}

function subscribe(onChange: () => void): () => void {
  const media = window.matchMedia(DARK_QUERY);
  media.addEventListener("change", onChange);
  window.addEventListener(CHANGE_EVENT, onChange);
  // Another tab changed the theme.
  const onStorage = (event: StorageEvent) => {
    if (event.key !== THEME_STORAGE_KEY) return;
    if (event.newValue === "light" || event.newValue === "dark")
      document.documentElement.setAttribute("data-theme", event.newValue);
    else document.documentElement.removeAttribute("data-theme");
    onChange();
  };
  window.addEventListener("storage", onStorage);
  return () => {
    media.removeEventListener("change", onChange);
    window.removeEventListener(CHANGE_EVENT, onChange);
    window.removeEventListener("storage", onStorage);
  };
}

function setTheme(theme: Theme): void {
  document.documentElement.setAttribute("data-theme", theme);
  try {
    localStorage.setItem(THEME_STORAGE_KEY, theme);
  } catch {
    // Private mode: the choice lasts for this page only.
  }
  window.dispatchEvent(new Event(CHANGE_EVENT));
}

/** A toggle button (aria-pressed) for the dark theme; the choice is kept in localStorage. */
export function ThemeToggle() {
  // null during server rendering and hydration: the server cannot know the theme.
  const theme = useSyncExternalStore<Theme | null>(subscribe, currentTheme, () => null);
  const dark = theme === "dark";
  return (
    <button
      type="button"
      className="theme-toggle"
      aria-pressed={theme === null ? undefined : dark}
      onClick={() => setTheme(dark ? "light" : "dark")}
      title={dark ? "Switch to the light theme" : "Switch to the dark theme"}
    >
      <svg aria-hidden="true" viewBox="0 0 16 16" width="14" height="14">
        {dark ? (
          <path fill="currentColor" d="M6 .5a7.5 7.5 0 1 0 9.5 9.4A6 6 0 0 1 6 .5Z" />
        ) : (
          <g fill="none" stroke="currentColor" strokeWidth="1.5" strokeLinecap="round">
            <circle cx="8" cy="8" r="3" />
            <path d="M8 1v1.5M8 13.5V15M1 8h1.5M13.5 8H15M3 3l1 1M12 12l1 1M3 13l1-1M12 4l1-1" />
          </g>
        )}
      </svg>
      <span>Dark theme</span>
    </button>
  );
}
