// Package test holds end-to-end tests over real PTYs, real bash and python3.
package test
