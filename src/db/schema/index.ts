export * from "./accounts";
export * from "./events";
export * from "./exports";
export * from "./files";
export * from "./forms";
export * from "./notifications";
export * from "./recurrences";
export * from "./tasks";
