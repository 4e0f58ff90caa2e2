"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";
import { type Role, roleAtLeast } from "@/lib/auth/auth-types";
import { NavIcon } from "./nav-icon";
import { NAV_ITEMS } from "./nav-items";

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
                <NavIcon name={item.icon} />
                <span>{item.label}</span>
              </Link>
            </li>
          );
        })}
      </ul>
    </nav>
  );
}
