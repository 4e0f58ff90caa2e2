import { serve } from "@/lib/auth/declare-route";
import { keyReuseRefusalsRoute } from "@/lib/features/keys-and-effects/routes";

// Declared in its feature (the handler and its OpenAPI operation from one object): asked live, never cached.
export const dynamic = "force-dynamic";

export const { GET, POST, PUT, PATCH, DELETE } = serve(keyReuseRefusalsRoute);
