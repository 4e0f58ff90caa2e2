import type { Metadata, Viewport } from "next";
import { headers } from "next/headers";
import Link from "next/link";
import type { ReactNode } from "react";
import { SessionBadge } from "@/components/auth/session-badge";
import { ConsoleModeProvider } from "@/components/shell/console-mode";
import { DatabaseStatus } from "@/components/shell/database-status";
import { SidebarNav } from "@/components/shell/sidebar-nav";
import { THEME_SCRIPT } from "@/components/theme/theme-script";
import { ThemeToggle } from "@/components/theme/theme-toggle";
import { currentPageSession } from "@/lib/auth/page-session";
import { consoleReadOnly } from "@/lib/auth/read-only";
import { Providers } from "./providers";
import "./globals.css";
import "./tables.css";

export const metadata: Metadata = {
  title: { default: "Onceboard", template: "%s · Onceboard" },
  description: "Whether your background jobs are safe to run twice.",
  // An admin console: no search engine should list it, even where robots.txt is not read.
  robots: { index: false, follow: false },
  // app/icon.svg is the tab icon; favicon.ico and these are made from it by scripts/make-icons.mjs.
  icons: { apple: { url: "/apple-touch-icon.png", sizes: "180x180", type: "image/png" } },
};

export const viewport: Viewport = {
  themeColor: [
    { media: "(prefers-color-scheme: light)", color: "#f5f6f8" },
    { media: "(prefers-color-scheme: dark)", color: "#0c1016" },
  ],
};

export default async function RootLayout({ children }: { children: ReactNode }) {
  // The proxy's per-request CSP nonce (proxy.ts): the one inline script must carry it.
  const nonce = (await headers()).get("x-nonce") ?? undefined;
  const session = await currentPageSession().catch(() => null);
  return (
    // The inline script sets data-theme before the first paint, hence suppressHydrationWarning.
    <html lang="en" suppressHydrationWarning>
      <head>
        {/* biome-ignore lint/security/noDangerouslySetInnerHtml: a constant script, no user input */}
        <script nonce={nonce} dangerouslySetInnerHTML={{ __html: THEME_SCRIPT }} />
      </head>
      <body>
        <a href="#main" className="skip-link">
          Skip to content
        </a>
        <Providers>
          <ConsoleModeProvider readOnly={consoleReadOnly()}>
            <div className="app-shell">
              <aside className="sidebar">
                <Link href="/overview" className="brand" aria-label="Onceboard home">
                  <svg aria-hidden="true" viewBox="0 0 24 24" width="22" height="22" className="brand-mark">
                    <rect x="1" y="1" width="22" height="22" rx="6" fill="currentColor" />
                    <path
                      d="M7 12.5l3.2 3.2L17 8.8"
                      fill="none"
                      stroke="var(--brand-ink)"
                      strokeWidth="2.4"
                      strokeLinecap="round"
                      strokeLinejoin="round"
                    />
                  </svg>
                  <span>Onceboard</span>
                </Link>
                <SidebarNav role={session?.role ?? null} />
                <div className="sidebar-footer">
                  <SessionBadge session={session} />
                  {consoleReadOnly() ? (
                    <p className="muted" data-testid="read-only-badge">
                      Read-only console
                    </p>
                  ) : null}
                  <DatabaseStatus />
                  <ThemeToggle />
                </div>
              </aside>
              <main id="main" className="main" tabIndex={-1}>
                {children}
              </main>
            </div>
          </ConsoleModeProvider>
        </Providers>
      </body>
    </html>
  );
}
