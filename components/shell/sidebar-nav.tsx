"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";
import { type Role, roleAtLeast } from "@/lib/auth/auth-types";
import { NAV_ITEMS, type NavIcon } from "./nav-items";

function Icon({ name }: { name: NavIcon }) {
  switch (name) {
    case "overview":
      return (
        <svg aria-hidden="true" viewBox="0 0 16 16" width="16" height="16">
          <path fill="currentColor" d="M1 9h3v6H1zM6.5 5h3v10h-3zM12 1h3v14h-3z" />
        </svg>
      );
    case "retention":
      return (
        <svg aria-hidden="true" viewBox="0 0 16 16" width="16" height="16">
          <path fill="currentColor" d="M1 2h14v3H1zM2 6h12v8H2zm3 2v1h6V8z" />
        </svg>
      );
    case "keys":
      return (
        <svg aria-hidden="true" viewBox="0 0 16 16" width="16" height="16">
          <path
            fill="currentColor"
            d="M6.5 1a5.5 5.5 0 1 0 3.9 9.4l4.1 4.1 1.1-1.1-4.1-4.1A5.5 5.5 0 0 0 6.5 1Zm0 1.6a3.9 3.9 0 1 1 0 7.8 3.9 3.9 0 0 1 0-7.8Z"
          />
        </svg>
      );
    case "violations":
      return (
        <svg aria-hidden="true" viewBox="0 0 16 16" width="16" height="16">
          <path fill="currentColor" d="M8 1 0.5 15h15L8 1Zm-.8 5h1.6l-.2 5H7.4l-.2-5Zm.8 6.2a.9.9 0 1 1 0 1.8.9.9 0 0 1 0-1.8Z" />
        </svg>
      );
    case "audit":
      return (
        <svg aria-hidden="true" viewBox="0 0 16 16" width="16" height="16">
          <path fill="currentColor" d="M3 1h7l3 3v11H3zm2 5v1h6V6zm0 3v1h6V9zm0 3v1h4v-1z" />
        </svg>
      );
    case "admin":
      return (
        <svg aria-hidden="true" viewBox="0 0 16 16" width="16" height="16">
          <path
            fill="currentColor"
            d="M8 1 2 3.5V8c0 3.5 2.6 6.2 6 7 3.4-.8 6-3.5 6-7V3.5L8 1Zm0 3a2 2 0 1 1 0 4 2 2 0 0 1 0-4Zm-3 7.5C5.5 10 6.6 9 8 9s2.5 1 3 2.5c-.8.9-1.8 1.5-3 1.8-1.2-.3-2.2-.9-3-1.8Z"
          />
        </svg>
      );
    case "gaps":
      return (
        <svg aria-hidden="true" viewBox="0 0 16 16" width="16" height="16">
          <path fill="currentColor" d="M1 14h14v1H1zM2 13V7h2v6zm3 0V3h2v10zm3 0V6h2v7zm3 0v-3h1.5v3zm2.5 0v-1.5H15V13z" />
        </svg>
      );
  }
}

/** The pages `role` may use; signed out (the login page), the viewer pages. */
export function SidebarNav({ role }: { role: Role | null }) {
  const pathname = usePathname();
  const items = NAV_ITEMS.filter((item) => item.minRole === "viewer" || (role !== null && roleAtLeast(role, item.minRole)));
  return (
    <nav aria-label="Console" className="sidebar-nav">
      <ul>
        {items.map((item) => {
          const active = pathname === item.href || pathname.startsWith(`${item.href}/`);
          return (
            <li key={item.href}>
              <Link href={item.href} aria-current={active ? "page" : undefined} className="nav-link">
                <Icon name={item.icon} />
                <span>{item.label}</span>
              </Link>
            </li>
          );
        })}
      </ul>
    </nav>
  );
}
