import { redirect } from "next/navigation";

/** The console opens on the Overview. */
export default function Home() {
  redirect("/overview");
}
