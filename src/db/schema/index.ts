export * from "./accounts";
export * from "./events";
export * from "./files";
export * from "./forms";
export * from "./recurrences";
export * from "./tasks";
