package main

func cleanupBinary() {}
